// Named stateful objects as the kernel listed them to nft (test/fixtures/nft/
// list-objects-json: the dump replies and nft's own JSON reading of them),
// decoded by us and compared field by field with nft's reading; and the
// path a refusal inside an object's state is reported at.
import t from 'tap';

import { addon } from '../../lib/nftables/native.js';
import { objectFromRaw } from '../../lib/nftables/stateful-objects.js';
import { changesToRaw } from '../../lib/nftables/changes.js';
import type { NftObject } from '../../lib/nftables/index.js';
import { loadFixture, messages } from '../support/fixtures.js';

const fx = loadFixture('nft', 'list-objects-json');
const theirs = (JSON.parse(fx.stdout!) as { nftables: Array<Record<string, Record<string, unknown>>> }).nftables.slice(2);
const ours: NftObject[] = messages(fx.received)
  .filter((m) => m.type >> 8 === 10)
  .map((m) => addon.nftDecode(m.bytes))
  .filter((m) => m.type === 'newobj')
  .map((m) => objectFromRaw(m.family, m.attrs));

/** nft's units for rates and bursts in bytes, and for periods. */
const BYTES: Record<string, number> = { bytes: 1, kbytes: 1024, mbytes: 1024 * 1024 };
const PERIOD: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400, week: 604800 };

/** An object as nft's JSON shows it, from ours. */
function asNftJson(o: NftObject): Record<string, unknown> {
  const base = { family: o.family, name: o.name, table: o.table, handle: o.handle, ...(o.comment === undefined ? {} : { comment: o.comment }) };
  if ('data' in o) return { [String(o.type)]: base };
  switch (o.type) {
    case 'counter':
      return { counter: { ...base, packets: Number(o.packets), bytes: Number(o.bytes) } };
    case 'quota':
      return { quota: { ...base, bytes: Number(o.bytes), used: Number(o.consumed ?? 0n), inv: o.over === true } };
    case 'limit': {
      const period = Object.keys(PERIOD).find((k) => PERIOD[k] === o.unit);
      if (o.limitType !== 'bytes') return { limit: { ...base, rate: o.rate, per: period, burst: o.burst, ...(o.over ? { inv: true } : {}) } };
      const unit = (n: number) => Object.keys(BYTES).reverse().find((k) => n % BYTES[k] === 0)!;
      return {
        limit: {
          ...base, rate: o.rate / BYTES[unit(o.rate)], per: period, ...(o.over ? { inv: true } : {}),
          rate_unit: unit(o.rate), burst: o.burst! / BYTES[unit(o.burst!)], burst_unit: unit(o.burst!),
        },
      };
    }
  }
  return {};
}

t.test('every object nft listed, read as nft read it', async (t) => {
  t.equal(ours.length, theirs.length, `${theirs.length} objects`);
  ours.forEach((o, i) => {
    const kind = Object.keys(theirs[i])[0];
    if ('data' in o) {
      // A kind without a typed form: its identity, and its state kept as bytes.
      t.same(asNftJson(o), { [kind]: { family: 'inet', name: 'ftp', table: 't', handle: theirs[i][kind].handle } });
      t.ok(o.data.length > 0);
    } else {
      t.same(asNftJson(o), theirs[i], `${kind} ${o.name}`);
    }
  });
});

t.test('a refusal inside an object\'s state names the attribute there', async (t) => {
  const [, msg] = addon.nftEncode(changesToRaw([{ op: 'addObject', object: { family: 'inet', table: 't', name: 'q', type: 'quota', bytes: 5120n, consumed: 1024n } }], () => undefined), {});
  // NFTA_QUOTA_CONSUMED (4), 1024 as a big-endian 64-bit value.
  const at = msg.indexOf(Buffer.from('0c000400' + '0000000000000400', 'hex'));
  t.ok(at > 0);
  t.same(addon.nftAttrPath(msg, at + 4), { path: 'data(quota).consumed', item: -1 });
  t.same(addon.nftAttrPath(msg, at), { path: 'data(quota).consumed', item: -1 });
});
