# Certificates for the https upload tests, made by the openssl CLI (3.0 or
# later). Sourced after tests/lib.sh, like lib.bash.
#
# certs_make DIR writes, all keys EC P-256 unless said otherwise:
#   ca.pem ca.key                the test CA
#   server.pem server.key        signed by the CA; DNS:localhost, IP:127.0.0.1
#   server_rsa.pem server_rsa.key  the same names, an RSA-2048 key
#   name_only.pem name_only.key  signed by the CA; DNS:localhost only
#   wrong_name.pem wrong_name.key  signed by the CA; DNS:not-this-host.example
#   expired.pem expired.key      signed by the CA; localhost, 127.0.0.1; valid
#                                from 2 days ago to 1 day ago
#   other_ca.pem other_ca.key    a second CA, which the tests never trust
#   untrusted.pem untrusted.key  signed by other_ca; localhost, 127.0.0.1
#   client.pem client.key        signed by the CA; extendedKeyUsage clientAuth
#   stranger.pem stranger.key    the same, signed by other_ca
#   bundle.pem                   a CA bundle as systems have them: an
#                                unrelated CA's certificate, then ca.pem
# openssl's output goes to DIR/openssl.log; on failure one line says why.
# shellcheck shell=bash

# _certs_ssl DIR ARGS...: openssl ARGS in DIR, its output logged.
_certs_ssl() {
	local dir=$1 out rc
	shift
	out=$(cd "$dir" && openssl "$@" 2>&1 </dev/null)
	rc=$?
	printf '$ openssl %s\n%s\n' "$*" "$out" >>"$dir/openssl.log"
	[ "$rc" = 0 ] && return 0
	echo "certs_make: openssl $1 failed: $(grep -m 1 -i error <<<"$out" || head -n 1 <<<"$out")" >&2
	return 1
}

# _certs_leaf DIR NAME EXTENSIONS SUBJECT KEY-ALGORITHM [KEY-OPTIONS...]: a
# key and a certificate signed by ca.pem, valid for 30 days.
_certs_leaf() {
	local dir=$1 name=$2 ext=$3 subj=$4 alg=$5
	_CERTS_SERIAL=$((_CERTS_SERIAL + 1))
	_certs_ssl "$dir" req -new -config certs.cnf -subj "$subj" -newkey "$alg" \
		"${@:6}" -nodes -keyout "$name.key" -out "$name.csr" &&
		_certs_ssl "$dir" x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key \
			-set_serial "$_CERTS_SERIAL" -days 30 -sha256 -extfile certs.cnf -extensions "$ext" \
			-out "$name.pem" &&
		rm -f "$dir/$name.csr"
}

# _certs_ca DIR NAME SUBJECT: a self-signed CA, valid for 10 years.
_certs_ca() {
	_certs_ssl "$1" req -x509 -new -config certs.cnf -extensions ca_ext -subj "$3" \
		-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$2.key" -out "$2.pem" \
		-days 3650 -sha256
}

certs_make() {
	local dir=$1 ec=(-pkeyopt ec_paramgen_curve:P-256) now start end
	if ! command -v openssl >/dev/null; then
		echo "certs_make: openssl is needed (apt-get install openssl)" >&2
		return 1
	fi
	mkdir -p "$dir" || return 1
	: >"$dir/openssl.log"
	_CERTS_SERIAL=$((RANDOM * 32768))
	# One configuration for everything, so that the system's openssl.cnf does not
	# matter: the extensions of each kind of certificate, and what `openssl ca`
	# needs to sign the expired one.
	cat >"$dir/certs.cnf" <<EOF || return 1
[req]
distinguished_name = dn
prompt = no
[dn]
[ca]
default_ca = testca
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[testca]
dir = .
database = ca.index
new_certs_dir = ca.new
serial = ca.serial
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = any
unique_subject = no
email_in_dn = no
[any]
commonName = supplied
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost, IP:127.0.0.1
[server_rsa]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost, IP:127.0.0.1
[name_only]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost
[wrong_name]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:not-this-host.example
[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
	_certs_ca "$dir" ca "/CN=cprof test CA" &&
		_certs_ca "$dir" other_ca "/CN=cprof untrusted CA" &&
		_certs_ca "$dir" bundle_filler "/CN=cprof bundle filler CA" &&
		_certs_leaf "$dir" server server /CN=localhost ec "${ec[@]}" &&
		_certs_leaf "$dir" server_rsa server_rsa /CN=localhost rsa:2048 &&
		_certs_leaf "$dir" name_only name_only /CN=localhost ec "${ec[@]}" &&
		_certs_leaf "$dir" wrong_name wrong_name /CN=not-this-host.example ec "${ec[@]}" &&
		_certs_leaf "$dir" client client "/CN=cprof test client" ec "${ec[@]}" || return 1
	cat "$dir/bundle_filler.pem" "$dir/ca.pem" >"$dir/bundle.pem" &&
		rm -f "$dir/bundle_filler.pem" "$dir/bundle_filler.key" || return 1

	# Signed by other_ca, which no test trusts: a server's and a client's.
	_certs_ssl "$dir" req -new -config certs.cnf -subj /CN=localhost -newkey ec "${ec[@]}" \
		-nodes -keyout untrusted.key -out untrusted.csr &&
		_certs_ssl "$dir" x509 -req -in untrusted.csr -CA other_ca.pem -CAkey other_ca.key \
			-set_serial $((_CERTS_SERIAL + 1)) -days 30 -sha256 -extfile certs.cnf \
			-extensions server -out untrusted.pem || return 1
	_certs_ssl "$dir" req -new -config certs.cnf -subj /CN=stranger -newkey ec "${ec[@]}" \
		-nodes -keyout stranger.key -out stranger.csr &&
		_certs_ssl "$dir" x509 -req -in stranger.csr -CA other_ca.pem -CAkey other_ca.key \
			-set_serial $((_CERTS_SERIAL + 3)) -days 30 -sha256 -extfile certs.cnf \
			-extensions client -out stranger.pem || return 1

	# Expired: `openssl x509` (3.0) sets no start date but now, so `openssl ca`
	# signs it, with both dates in the past (UTCTime, UTC).
	now=$(date +%s) || return 1
	start=$(date -u -d "@$((now - 2 * 86400))" +%y%m%d%H%M%SZ) &&
		end=$(date -u -d "@$((now - 86400))" +%y%m%d%H%M%SZ) || return 1
	mkdir -p "$dir/ca.new" && : >"$dir/ca.index" &&
		printf '%08X\n' $((_CERTS_SERIAL + 2)) >"$dir/ca.serial" || return 1
	_certs_ssl "$dir" req -new -config certs.cnf -subj /CN=localhost -newkey ec "${ec[@]}" \
		-nodes -keyout expired.key -out expired.csr &&
		_certs_ssl "$dir" ca -batch -config certs.cnf -notext -in expired.csr -out expired.pem \
			-startdate "$start" -enddate "$end" -extfile certs.cnf -extensions server || return 1
	(cd "$dir" && rm -rf ./*.csr ca.index* ca.serial* ca.new)
}

# certs_ready DIR: certs_make DIR, or "not ok certs - why" and a failure.
certs_ready() {
	local why
	why=$(certs_make "$1" 2>&1) && return 0
	not_ok certs "$why"
	return 1
}
