/**
 * One ruleset two ways: as nft commands (test/fixtures/nft/kube-proxy.nft, which the golden fixture
 * test/fixtures/nft/transaction.json was recorded from) and as the changes
 * a caller of this library writes for it. Tests apply one with nft and the
 * other with the library and compare what each reads back.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Change, Expression } from '../../lib/nftables/index.js';

/** The ruleset as nft commands (test/fixtures/nft/kube-proxy.nft). */
export const KP_NFT = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/nft/kube-proxy.nft'), 'utf8');

const t = { family: 'inet', table: 'kp' } as const;
const b = (...x: number[]) => Buffer.from(x);
const ipv4Only: Expression[] = [{ type: 'meta', key: 'nfproto', dreg: 1 }, { type: 'cmp', op: 'eq', sreg: 1, data: b(2) }];
const mark = b(0x00, 0x40, 0x00, 0x00); // 0x4000 in host order

/** The rules of KP_NFT, expression for expression as nft compiles them. */
export const KP_RULES: Array<{ chain: string; comment?: string; expressions: Expression[] }> = [
  { chain: 'c', comment: 'hi', expressions: [
    ...ipv4Only,
    { type: 'payload', base: 'network', offset: 12, len: 4, dreg: 1 },
    { type: 'lookup', set: 'r', sreg: 1, invert: true },
    { type: 'counter' },
    { type: 'verdict', verdict: 'drop' },
  ] },
  { chain: 'c', expressions: [
    ...ipv4Only,
    { type: 'payload', base: 'network', offset: 16, len: 4, dreg: 1 },
    { type: 'meta', key: 'l4proto', dreg: 9 },
    { type: 'payload', base: 'transport', offset: 2, len: 2, dreg: 10 },
    { type: 'lookup', set: 'm', sreg: 1, dreg: 0 },
  ] },
  { chain: 'c', expressions: [
    { type: 'ct', key: 'state', dreg: 1 },
    { type: 'bitwise', sreg: 1, dreg: 1, len: 4, mask: b(6, 0, 0, 0), xor: b(0, 0, 0, 0) },
    { type: 'cmp', op: 'neq', sreg: 1, data: b(0, 0, 0, 0) },
    { type: 'verdict', verdict: 'accept' },
  ] },
  { chain: 'c', expressions: [
    { type: 'fib', flags: ['daddr'], result: 'type', dreg: 1 },
    { type: 'cmp', op: 'eq', sreg: 1, data: b(2, 0, 0, 0) },
    { type: 'verdict', verdict: 'jump', chain: 'r1' },
  ] },
  { chain: 'c', expressions: [{ type: 'immediate', dreg: 1, data: mark }, { type: 'meta', key: 'mark', sreg: 1 }] },
  { chain: 'c', expressions: [{ type: 'reject', reject: 'icmpx', code: 1 }] },
  { chain: 'n', expressions: [
    { type: 'meta', key: 'mark', dreg: 1 },
    { type: 'bitwise', sreg: 1, dreg: 1, op: 'bool', len: 4, mask: mark, xor: b(0, 0, 0, 0) },
    { type: 'cmp', op: 'eq', sreg: 1, data: mark },
    { type: 'masquerade' },
  ] },
  { chain: 'n', expressions: [{ type: 'immediate', dreg: 1, data: b(1, 2, 3, 4) }, { type: 'nat', nat: 'snat', family: 'ip', addrMin: 1 }] },
  { chain: 'pre', expressions: [
    ...ipv4Only,
    { type: 'payload', base: 'network', offset: 16, len: 4, dreg: 1 },
    { type: 'cmp', op: 'eq', sreg: 1, data: b(1, 2, 3, 4) },
    { type: 'meta', key: 'l4proto', dreg: 1 },
    { type: 'cmp', op: 'eq', sreg: 1, data: b(6) },
    { type: 'immediate', dreg: 1, data: b(10, 0, 0, 1) },
    { type: 'immediate', dreg: 2, data: b(0, 80) },
    { type: 'nat', nat: 'dnat', family: 'ip', addrMin: 1, protoMin: 2 },
  ] },
  { chain: 'r1', expressions: [
    { type: 'meta', key: 'l4proto', dreg: 1 },
    { type: 'cmp', op: 'eq', sreg: 1, data: b(17) },
    { type: 'verdict', verdict: 'return' },
  ] },
];

const concat3 = ['ipv4_addr', 'inet_proto', 'inet_service'] as const;

/** KP_NFT as library changes, in the same order. */
export const KP_CHANGES: Change[] = [
  { op: 'addTable', table: { family: 'inet', name: 'kp' } },
  { op: 'addSet', set: { ...t, name: 's', type: [...concat3] } },
  { op: 'addSet', set: { ...t, name: 'r', type: 'ipv4_addr', flags: ['interval'] } },
  { op: 'addSet', set: { ...t, name: 'tc', type: 'ipv4_addr', flags: ['timeout'], timeout: 3_600_000, counter: true, comment: 'c' } },
  { op: 'addSet', set: { ...t, name: 'ranges', type: ['ipv4_addr', 'inet_service'], flags: ['interval'] } },
  { op: 'addSet', set: { ...t, name: 'm', type: [...concat3], map: 'verdict' } },
  { op: 'addChain', chain: { ...t, name: 'c', type: 'filter', hook: 'input', priority: 0, policy: 'accept' } },
  { op: 'addChain', chain: { ...t, name: 'n', type: 'nat', hook: 'postrouting', priority: 100 } },
  { op: 'addChain', chain: { ...t, name: 'pre', type: 'nat', hook: 'prerouting', priority: -100 } },
  { op: 'addChain', chain: { ...t, name: 'r1' } },
  ...KP_RULES.map((r): Change => ({ op: 'addRule', rule: { ...t, ...r } })),
  { op: 'addElements', set: { ...t, name: 's' }, elements: [{ key: ['10.0.0.1', 'tcp', 80] }, { key: ['10.0.0.2', 'udp', 53] }] },
  { op: 'addElements', set: { ...t, name: 'r' }, elements: [{ key: '10.0.0.0/8' }, { key: '192.168.1.1-192.168.1.5' }] },
  { op: 'addElements', set: { ...t, name: 'ranges' }, elements: [{ key: ['10.0.0.0/8', 80] }, { key: ['192.168.0.1-192.168.0.9', '1000-2000'] }] },
  { op: 'addElements', set: { ...t, name: 'tc' }, elements: [{ key: '10.0.0.1', timeout: 30_000, comment: 'x' }] },
  { op: 'addElements', set: { ...t, name: 'm' }, elements: [
    { key: ['10.0.0.1', 'tcp', 80], value: { verdict: 'jump', chain: 'r1' } },
    { key: ['10.0.0.2', 'udp', 53], value: { verdict: 'drop' } },
  ] },
];
