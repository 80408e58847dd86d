// formatRule() against nft's own text: the rules of the recorded listing
// (test/fixtures/nft/list-ruleset), decoded and printed, are the lines nft
// printed for them; and the statements nft prints in its own ways. (The
// stateful statements' texts are checked against nft's listing in the host
// kernel test nft-stateful.)
import t from 'tap';

import { expressionToRaw } from '../../lib/nftables/expressions/index.js';
import { formatRule } from '../../lib/nftables/format.js';
import { durationText } from '../../lib/nftables/format-stateful.js';
import type { Expression } from '../../lib/nftables/index.js';
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

t.test('limit, quota and named objects, as nft prints them; the forms it has no words for, in its debug form', async (t) => {
  const f = (...expressions: Expression[]) => formatRule({ expressions });
  t.equal(f({ type: 'limit', rate: 3, unit: 3600, limitType: 'packets', burst: 5 }), 'limit rate 3/hour', "nft's default burst left out");
  t.equal(f({ type: 'limit', rate: 3, unit: 86400, burst: 1 }), 'limit rate 3/day burst 1 packets');
  t.equal(f({ type: 'limit', rate: 3072, unit: 604800, limitType: 'bytes', over: true }), 'limit rate over 3 kbytes/week', 'the largest unit that divides it');
  t.equal(f({ type: 'limit', rate: 1536, unit: 1, limitType: 'bytes' }), 'limit rate 1536 bytes/second', 'bytes where 1024 does not divide it');
  t.equal(f({ type: 'limit', rate: 3 * 2 ** 30, unit: 60, limitType: 'bytes', burst: 1000 }), 'limit rate 3072 mbytes/minute burst 1000 bytes', 'mbytes at most');
  t.equal(f({ type: 'limit', rate: 3, unit: 7 }), '[ limit rate 3 unit 7 ]');
  t.equal(f({ type: 'quota', bytes: 2048n, consumed: 1n }), 'quota 2 kbytes used 1 bytes');
  t.equal(f({ type: 'quota', bytes: 5n * 2n ** 20n, consumed: 0n, over: true }, { type: 'verdict', verdict: 'drop' }), 'quota over 5 mbytes drop');
  t.equal(f({ type: 'objref', objectType: 'counter', name: 'a "b"' }), 'counter name "a \\"b\\""');
  t.equal(f({ type: 'objref', objectType: 'synproxy', name: 'p' }), '[ objref objectType synproxy name p ]');
  t.equal(f({ type: 'objref', sreg: 1, set: 'm' }), '[ objref sreg 1 set m ]');
});

t.test('limit, quota and named objects: bad input names the field', async (t) => {
  const refused = (e: unknown, want: { code: string; field: string }) => t.throws(() => expressionToRaw(e, 'rule.expressions[1]'), want, JSON.stringify(e, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)));
  refused({ type: 'limit', rate: 0, unit: 1 }, { code: 'ERR_OUT_OF_RANGE', field: 'rule.expressions[1].rate' });
  refused({ type: 'limit', rate: 1 }, { code: 'ERR_INVALID_ARG_TYPE', field: 'rule.expressions[1].unit' });
  refused({ type: 'limit', rate: 1, unit: 1, limitType: 'frames' }, { code: 'ERR_INVALID_ARG_VALUE', field: 'rule.expressions[1].limitType' });
  refused({ type: 'limit', rate: 1, unit: 1, over: 'yes' }, { code: 'ERR_INVALID_ARG_TYPE', field: 'rule.expressions[1].over' });
  refused({ type: 'limit', rate: 1, unit: 1, per: 'second' }, { code: 'ERR_INVALID_ARG_VALUE', field: 'rule.expressions[1].per' });
  refused({ type: 'quota', bytes: 100 }, { code: 'ERR_INVALID_ARG_TYPE', field: 'rule.expressions[1].bytes' });
  refused({ type: 'quota', bytes: 100n, consumed: -1n }, { code: 'ERR_OUT_OF_RANGE', field: 'rule.expressions[1].consumed' });
  refused({ type: 'objref', objectType: 'meter', name: 'x' }, { code: 'ERR_INVALID_ARG_VALUE', field: 'rule.expressions[1].objectType' });
  refused({ type: 'objref', objectType: 'counter', name: '' }, { code: 'ERR_INVALID_ARG_VALUE', field: 'rule.expressions[1].name' });
  refused({ type: 'objref', set: 'm' }, { code: 'ERR_INVALID_ARG_TYPE', field: 'rule.expressions[1].sreg' });
  refused({ type: 'objref', set: 'm', sreg: 1, name: 'x' }, { code: 'ERR_INVALID_ARG_VALUE', field: 'rule.expressions[1].name' });
  t.same(expressionToRaw({ type: 'limit', rate: 1, unit: 1, limitType: 'bytes' }, 'e'), { type: 'limit', rate: 1, unit: 1, burst: 0, limitType: 1, flags: 0 }, "a byte limit's burst defaults to 0, as nft's");
});

t.test('numgen, hash and set statements as nft wrote them, printed as the command that made them', async (t) => {
  const names = ['rule-numgen-inc', 'rule-jhash', 'rule-symhash', 'rule-dynset-meter', 'rule-dynset-counter', 'rule-dynset-map', 'rule-dynset-delete', 'rule-dynset-two'];
  for (const name of names) {
    const fx = loadFixture('nft', name);
    // NFT_MSG_NEWRULE (6) among what nft sent (its cache reads too).
    const sent = messages(fx.sent).find((m) => m.type === ((10 << 8) | 6))!;
    const d = addon.nftDecode(sent.bytes);
    const rule = ruleFromRaw(d.family, d.attrs);
    // The command as the shell quoted it (`\{`).
    t.equal(formatRule(rule), fx.command.replace(/^nft add rule inet t c /, '').replace(/\\(.)/g, '$1'), name);
  }
  // In an ip or ip6 table nft does not name the address family of a nat statement.
  const dnat: Expression[] = [
    { type: 'immediate', dreg: 1, data: Buffer.from([10, 0, 0, 1]) }, { type: 'immediate', dreg: 2, data: Buffer.from([0, 80]) },
    { type: 'nat', nat: 'dnat', family: 'ip', addrMin: 1, protoMin: 2 },
  ];
  t.equal(formatRule({ family: 'ip', expressions: dnat }), 'dnat to 10.0.0.1:80');
  t.equal(formatRule({ family: 'inet', expressions: dnat }), 'dnat ip to 10.0.0.1:80');
  t.same([30_000, 5_400_000, 1500, 172_800_000, 0].map(durationText), ['30s', '1h30m', '1s500ms', '2d', '0s']);
});

t.test('numgen, hash and set statements: bad input names the field', async (t) => {
  const refused = (e: unknown, want: { code: string; field: string }) => t.throws(() => expressionToRaw(e, 'rule.expressions[0]'), want, JSON.stringify(e));
  refused({ type: 'numgen', dreg: 1, modulus: 0, mode: 'random' }, { code: 'ERR_OUT_OF_RANGE', field: 'rule.expressions[0].modulus' });
  refused({ type: 'numgen', dreg: 1, modulus: 2, mode: 'roundrobin' }, { code: 'ERR_INVALID_ARG_VALUE', field: 'rule.expressions[0].mode' });
  // The kernel refuses an offset that takes the largest number past 32 bits (EOVERFLOW).
  refused({ type: 'numgen', dreg: 1, modulus: 0xffffffff, mode: 'inc', offset: 2 }, { code: 'ERR_OUT_OF_RANGE', field: 'rule.expressions[0].offset' });
  refused({ type: 'hash', hash: 'jhash', dreg: 1, modulus: 4 }, { code: 'ERR_INVALID_ARG_TYPE', field: 'rule.expressions[0].sreg' });
  refused({ type: 'hash', hash: 'symhash', dreg: 1, modulus: 4, seed: 1 }, { code: 'ERR_INVALID_ARG_VALUE', field: 'rule.expressions[0].seed' });
  refused({ type: 'dynset', set: 's', op: 'update', sregKey: 1, timeout: 0 }, { code: 'ERR_OUT_OF_RANGE', field: 'rule.expressions[0].timeout' });
  refused({ type: 'dynset', set: 's', op: 'add', sregKey: 1, expressions: [{ type: 'verdict', verdict: 'accept' }] }, { code: 'ERR_INVALID_ARG_VALUE', field: 'rule.expressions[0].expressions[0].type' });
  refused({ type: 'dynset', set: 's', op: 'add', sregKey: 1, expressions: [{ type: 'limit', rate: 0, unit: 1 }] }, { code: 'ERR_OUT_OF_RANGE', field: 'rule.expressions[0].expressions[0].rate' });
});
