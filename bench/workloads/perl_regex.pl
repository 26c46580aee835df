# SPDX-License-Identifier: MIT
#
# A workload of bench/stacks: regular expressions over generated log lines,
# so Debian's perl spends its time in libperl's regex engine (Perl_regexec_flags,
# S_regmatch) under the runloop. Fixed work:
#
#   perl perl_regex.pl ROUNDS FILE   prints a checksum
use strict;
use warnings;

my ($rounds, $file) = @ARGV;
$rounds //= 4;
open(my $fh, '<', $file) or die "$file: $!";
my @lines = <$fh>;
close($fh);

my %count;
my $sum = 0;
for my $r (1 .. $rounds) {
	for my $line (@lines) {
		if ($line =~ /^(\d+)\s+(\w+)\s+(\w*a\w*)\s+(\d+)\.(\d{3})/) {
			$count{"$2/$3"}++;
			$sum += $4 % 7;
		}
		$sum++ if $line =~ /(?:eta|theta|iota)\s+\S+\s+[0-4]/;
		(my $t = $line) =~ s/([aeiou])\1*/$1/g;
		$sum += length($t) & 1;
	}
}
print $sum + scalar(keys %count), "\n";
