# scripts/sandbox/golden-cases-nft.sh: the nft cases of golden-cases.sh,
# which sources it (gcase and the suite's variables come from there).
suite_nft() {
	TOOL_VERSION=$(nft --version 2>&1 | head -n1)
	# The ruleset most cases start from (untraced). Set-ups carry their
	# ruleset inline, so a fixture's "setup" says what was there.
	local base full
	base=$(cat <<-'RULESET'
	table inet t {
		set s { type ipv4_addr . inet_proto . inet_service; }
		set r { type ipv4_addr; flags interval; }
		set tc { type ipv4_addr; flags timeout; timeout 1h; counter; comment "c"; }
		set ranges { type ipv4_addr . inet_service; flags interval; }
		map m { type ipv4_addr . inet_proto . inet_service : verdict; }
		chain c { type filter hook input priority 0; policy accept; }
		chain n { type nat hook postrouting priority srcnat; }
		chain pre { type nat hook prerouting priority dstnat; }
		chain r1 { }
	}
	RULESET
	)
	full=$base$'\n'$(cat <<-'RULESET'
	add rule inet t c ip saddr 10.0.0.0/8 tcp dport 80 counter accept comment "hi"
	add rule inet t c ct state established,related accept
	add rule inet t c ip daddr . meta l4proto . th dport vmap @m
	add rule inet t c fib daddr type local jump r1
	add rule inet t n meta mark & 0x4000 == 0x4000 masquerade
	add element inet t s { 10.0.0.1 . tcp . 80, 10.0.0.2 . udp . 53 }
	add element inet t r { 10.0.0.0/8, 192.168.1.1-192.168.1.5 }
	add element inet t ranges { 10.0.0.0/8 . 80 }
	add element inet t m { 10.0.0.1 . tcp . 80 : jump r1 }
	add element inet t tc { 10.0.0.1 comment "x" }
	RULESET
	)
	local B="nft -f - <<'RULESET'"$'\n'"$base"$'\n'"RULESET"
	local F="nft -f - <<'RULESET'"$'\n'"$full"$'\n'"RULESET"
	local T='nft add table inet t'

	gcase table-add "" nft add table inet t
	gcase table-comment "" nft add table ip t '{' comment '"owned"' ';' '}'
	gcase table-delete "$B" nft delete table inet t
	gcase table-delete-missing "" nft delete table inet nosuch
	gcase chain-base-filter "$T" nft add chain inet t c '{' type filter hook input priority 0 ';' policy drop ';' '}'
	gcase chain-base-nat "$T" nft add chain inet t n '{' type nat hook postrouting priority srcnat ';' '}'
	gcase chain-regular "$T" nft add chain inet t r1
	gcase chain-flush "$F" nft flush chain inet t c
	gcase set-concat "$T" nft add set inet t s '{' type ipv4_addr . inet_proto . inet_service ';' '}'
	gcase set-interval "$T" nft add set inet t r '{' type ipv4_addr ';' flags interval ';' '}'
	gcase set-timeout-counter-comment "$T" nft add set inet t tc '{' type ipv4_addr ';' flags timeout ';' timeout 1h ';' counter ';' comment '"c"' ';' '}'
	gcase set-concat-interval "$T" nft add set inet t ranges '{' type ipv4_addr . inet_service ';' flags interval ';' '}'
	gcase map-verdict "$T" nft add map inet t m '{' type ipv4_addr . inet_proto . inet_service : verdict ';' '}'
	gcase set-ipv6-interval "$T" nft add set inet t r6 '{' type ipv6_addr ';' flags interval ';' '}'
	gcase map-object "$T" nft add map inet t om '{' type ipv4_addr : counter ';' '}'
	gcase elem-map-object "$T; nft add counter inet t hits; nft add counter inet t other; nft add map inet t om '{ type ipv4_addr : counter; }'" nft add element inet t om '{' 10.0.0.1 : '"hits"', 10.0.0.2 : '"other"' '}'
	# Named stateful objects: their state in NFTA_OBJ_DATA, comments in userdata.
	gcase obj-counter "$T" nft add counter inet t hits
	gcase obj-counter-values "$T" nft add counter inet t c2 '{' packets 10 bytes 1000 '}'
	gcase obj-counter-comment "$T" nft add counter inet t cc '{' comment '"x"' ';' '}'
	gcase obj-quota "$T" nft add quota inet t q '{' over 100 mbytes used 1 kbytes '}'
	gcase obj-limit "$T" nft add limit inet t l '{' rate 10/second burst 20 packets '}'
	gcase obj-limit-bytes "$T" nft add limit inet t lb '{' rate over 1 mbytes/second burst 100 kbytes '}'
	gcase obj-delete "$T; nft add quota inet t q '{ 5 kbytes }'" nft delete quota inet t q
	gcase map-concat-value "$T" nft add map inet t dn '{' type inet_service : ipv4_addr . inet_service ';' '}'
	gcase elem-map-concat-value "$T; nft add map inet t dn '{ type inet_service : ipv4_addr . inet_service; }'" nft add element inet t dn '{' 80 : 10.0.0.1 . 8080, 443 : 10.0.0.2 . 8443 '}'
	gcase elem-concat "$B" nft add element inet t s '{' 10.0.0.1 . tcp . 80, 10.0.0.2 . udp . 53 '}'
	gcase elem-interval "$B" nft add element inet t r '{' 10.0.0.0/8, 192.168.1.1-192.168.1.5 '}'
	gcase elem-concat-interval "$B" nft add element inet t ranges '{' 10.0.0.0/8 . 80, 192.168.0.1-192.168.0.9 . 1000-2000 '}'
	gcase elem-timeout-comment "$B" nft add element inet t tc '{' 10.0.0.1 timeout 30s comment '"x"' '}'
	# Marks are host order, but big end first in interval sets.
	gcase elem-mark-interval "$T; nft add set inet t mk '{ type mark; flags interval; }'" nft add element inet t mk '{' 0x1-0x5, 0x10, 0xfffffff0-0xffffffff '}'
	gcase elem-mark-concat-interval "$T; nft add set inet t mkc '{ type mark . inet_service; flags interval; }'" nft add element inet t mkc '{' 0x1-0x5 . 80, 0x7 . 90-95 '}'
	gcase elem-map-verdict "$B" nft add element inet t m '{' 10.0.0.1 . tcp . 80 : jump r1 ',' 10.0.0.2 . udp . 53 : drop '}'
	gcase elem-delete "$F" nft delete element inet t s '{' 10.0.0.1 . tcp . 80 '}'
	gcase rule-match-counter-accept "$B" nft add rule inet t c ip saddr 10.0.0.0/8 tcp dport 80 counter accept comment '"hi"'
	gcase rule-mark-set "$B" nft add rule inet t c meta mark set 0x4000
	gcase rule-ct-state "$B" nft add rule inet t c ct state established,related accept
	gcase rule-limit "$B" nft add rule inet t c limit rate 10/second accept
	gcase rule-limit-bytes-over "$B" nft add rule inet t c limit rate over 1 mbytes/second burst 100 kbytes drop
	gcase rule-quota "$B" nft add rule inet t c quota over 100 mbytes drop
	gcase rule-objref-counter "$B"$'\n'"nft add counter inet t hits" nft add rule inet t c counter name '"hits"' accept
	# Sets updated from the packet path: meters (a limit per key), a counter per element, a map's value, a delete.
	local D="$T; nft add set inet t rl '{ type ipv4_addr; size 65535; flags dynamic,timeout; timeout 1m; }'; nft add set inet t seen '{ type ipv4_addr; flags dynamic; }'; nft add map inet t lastport '{ type ipv4_addr : inet_service; flags dynamic,timeout; timeout 10s; }'; nft add chain inet t c"
	gcase rule-dynset-meter "$D" nft add rule inet t c update @rl '{' ip saddr timeout 30s limit rate over 10/second '}' drop
	gcase rule-dynset-counter "$D" nft add rule inet t c add @seen '{' ip saddr counter '}'
	gcase rule-dynset-map "$D" nft add rule inet t c update @lastport '{' ip saddr : tcp dport '}'
	gcase rule-dynset-delete "$D" nft add rule inet t c delete @seen '{' ip saddr '}'
	gcase rule-dynset-two "$D" nft add rule inet t c update @rl '{' ip saddr counter limit rate 5/second '}'
	# kube-proxy's nftables mode spreads connections with numgen over a verdict map.
	gcase rule-numgen-vmap "$B" nft add rule inet t c numgen random mod 2 vmap '{' 0 : jump r1, 1 : drop '}'
	gcase rule-numgen-inc "$B" nft add rule inet t c meta mark set numgen inc mod 4 offset 100
	gcase rule-jhash "$B" nft add rule inet t c meta mark set jhash ip saddr . tcp dport mod 8 seed 0xfeed offset 1
	gcase rule-symhash "$B" nft add rule inet t c meta mark set symhash mod 2
	gcase set-typeof-numgen "$T" nft add map inet t ng '{' typeof numgen random mod 2 : verdict ';' '}'
	gcase rule-vmap-concat "$B" nft add rule inet t c ip daddr . meta l4proto . th dport vmap @m
	gcase rule-fib-jump "$B" nft add rule inet t c fib daddr type local jump r1
	gcase rule-mark-masquerade "$B" nft add rule inet t n meta mark '&' 0x4000 == 0x4000 masquerade
	gcase rule-lookup-inv-drop "$B" nft add rule inet t c ip saddr != @r drop
	gcase rule-reject "$B" nft add rule inet t c reject
	gcase rule-dnat "$B" nft add rule inet t pre ip daddr 1.2.3.4 meta l4proto tcp dnat ip to 10.0.0.1:80
	gcase rule-snat "$B" nft add rule inet t n snat ip to 1.2.3.4
	gcase rule-goto-return "$B" nft add rule inet t r1 meta l4proto udp goto r1
	gcase rule-delete "$F" nft delete rule inet t c handle 12
	# One transaction with every shape at once (test/fixtures/nft/kube-proxy.nft, which the
	# tests also apply): sets, elements and lookups of sets added in the same
	# batch carry nft's set ids, which a library reproduces only there.
	STDIN_FILE=$HERE/../../test/fixtures/nft/kube-proxy.nft gcase transaction "" nft -f -
	gcase list-ruleset "$F" nft list ruleset
	gcase list-ruleset-json "$F" nft -j list ruleset
	local O="nft -f - <<'RULESET'"$'\n'"table inet t {
	counter hits { packets 10 bytes 1000 }
	counter cc { comment \"x\"; }
	quota q { over 100 mbytes used 1 kbytes }
	quota q2 { 5 kbytes }
	limit l { rate 10/second burst 20 packets }
	limit lb { rate over 1 mbytes/second burst 100 kbytes }
	limit lm { rate 5/minute; comment \"per minute\"; }
	ct helper ftp { type \"ftp\" protocol tcp; }
}"$'\n'"RULESET"
	gcase list-objects-json "$O" nft -j list ruleset
}
