# Rewrites a skeleton that bpftool generated (stdin to stdout) so that it
# takes its object's bytes from bpf_blob__bytes (src/sample/bpf_blob.c), which
# keeps them gzipped in the binary, instead of a string literal of the whole
# object: 128 KB of the three objects, a tenth of the binary, down to 35 KB.
#
#   awk -v skel=unwinder_bpf -v blob=unwinder -f bpf/compress_skeleton.awk
#
# The one thing replaced is the body of SKEL__elf_bytes(); a skeleton
# without it (another bpftool) fails the build rather than passing through.
$0 == "static inline const void *" skel "__elf_bytes(size_t *sz)" && !done {
	print "const void *bpf_blob__bytes(const char *name, size_t *sz);"
	print ""
	print
	print "{"
	print "\treturn bpf_blob__bytes(\"" blob "\", sz);"
	print "}"
	skip = 1
	done = 1
	next
}
skip {
	if ($0 == "}")
		skip = 0
	next
}
{ print }
END {
	if (!done) {
		print "compress_skeleton.awk: no " skel "__elf_bytes() in the skeleton" > "/dev/stderr"
		exit 1
	}
}
