// formatRule() against nft's own text: the rules of the recorded listing
// (test/fixtures/nft/list-ruleset), decoded and printed, are the lines nft
// printed for them; and the statements nft prints in its own ways.
import t from 'tap';

import { formatRule } from '../../lib/nftables/format.js';
import { addon } from '../../lib/nftables/native.js';
import { ruleFromRaw } from '../../lib/nftables/objects.js';
import { loadFixture, messages } from '../support/fixtures.js';
import { KP_RULES } from '../support/nft-ruleset.js';

t.test('the recorded listing: every rule as nft printed it', async (t) => {
  const fx = loadFixture('nft', 'list-ruleset');
  const rules = messages(fx.received).filter((m) => m.type >> 8 === 10).map((m) => addon.nftDecode(m.bytes))
    .filter((d) => d.type === 'newrule').map((d) => ruleFromRaw(d.family, d.attrs));
  const lines = fx.stdout!.split('\n').map((l) => l.trim());
  t.equal(rules.length, 5);
  for (const r of rules) t.ok(lines.includes(formatRule(r)), formatRule(r));
});

t.test('the statements of the vocabulary', async (t) => {
  t.same(KP_RULES.map((r) => formatRule(r)), [
    'ip saddr != @r counter drop comment "hi"',
    'ip daddr . meta l4proto . th dport vmap @m',
    'ct state established,related accept',
    'fib daddr type local jump r1',
    'meta mark set 0x00004000',
    'reject',
    'meta mark & 0x00004000 == 0x00004000 masquerade',
    'snat ip to 1.2.3.4',
    'ip daddr 1.2.3.4 meta l4proto tcp dnat ip to 10.0.0.1:80',
    'meta l4proto udp return',
  ]);
  t.equal(formatRule({ expressions: [{ type: 'raw', name: 'quota', data: Buffer.from([1, 2]) }] }), '[ quota name quota data 0x0102 ]');
});

t.test('a mark computed from itself, and masquerade flags, as nft prints them', async (t) => {
  const b = (...x: number[]) => Buffer.from(x);
  const load = { type: 'meta', key: 'mark', dreg: 1 } as const;
  const store = { type: 'meta', key: 'mark', sreg: 1 } as const;
  t.equal(formatRule({ expressions: [load, { type: 'bitwise', sreg: 1, dreg: 1, len: 4, op: 'bool', mask: b(255, 191, 255, 255), xor: b(0, 64, 0, 0) }, store] }), 'meta mark set meta mark | 0x00004000');
  t.equal(formatRule({ expressions: [load, { type: 'bitwise', sreg: 1, dreg: 1, len: 4, op: 'bool', mask: b(255, 255, 255, 255), xor: b(0, 64, 0, 0) }, store] }), 'meta mark set meta mark ^ 0x00004000');
  t.equal(formatRule({ expressions: [{ type: 'masquerade', flags: ['fully-random'] }] }), 'masquerade fully-random');
  t.equal(formatRule({ family: 'ip', expressions: [{ type: 'reject', reject: 'icmp', code: 3 }] }), 'reject', 'port unreachable is nft\'s plain reject in ip');
  t.equal(formatRule({ family: 'ip6', expressions: [{ type: 'reject', reject: 'icmp', code: 4 }] }), 'reject', 'and in ip6');
  t.equal(formatRule({ family: 'ip6', expressions: [{ type: 'reject', reject: 'icmp', code: 3 }] }), 'reject with icmp 3');
});
