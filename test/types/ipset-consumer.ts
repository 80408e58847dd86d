// A strict consumer of the ipset API (strict, exactOptionalPropertyTypes,
// no skipLibCheck): what a read returns can be passed back to the matching
// write, and the error classes' declarations hold. Compiled, never run, by
// test/unit/ipset-types.test.ts.
import {
  Ipset,
  IpsetBulkError,
  IpsetError,
  IpsetUnsupportedError,
  NetlinkError,
  type CreateOptions,
  type CreateSpec,
  type EntryObject,
  type SetHeader,
  type SetListing,
  type SetType,
} from 'ipvs-netlink';

export async function roundTrip(ipset: Ipset): Promise<void> {
  // list header -> create / replace, as they come.
  const header: SetHeader = await ipset.header('a');
  const type: SetType = header.type;
  await ipset.create('b', type, header);
  await ipset.replace('c', ['10.0.0.1'], header);
  const spec: CreateSpec = header;
  const options: CreateOptions = header;
  await ipset.create('d', spec.type, options);
  // list -> addMany: entries come in the text the writes take.
  const listing: SetListing = await ipset.list('a');
  await ipset.addMany('b', listing.entries);
  const entry: EntryObject = { ip: '10.0.0.0', cidr: 24, ip2: '10.1.0.0', cidr2: 16, nomatch: true };
  await ipset.add('e', entry, { exist: true });
  await ipset.add('l', { name: 'x' }, { before: 'y' });
  const present: boolean = await ipset.test('l', 'x', { after: 'y' });
  void present;
}

export function errors(err: unknown): string {
  if (err instanceof IpsetBulkError) {
    const first = err.failures[0];
    const halt = err.halt?.code ?? 'none';
    return `${err.set} ${err.applied}/${err.total} ${first?.code ?? ''} ${halt} ${err.skipped.length}`;
  }
  if (err instanceof IpsetUnsupportedError) return `${err.setType} ${err.option ?? ''} ${err.revision ?? ''} ${err.needs ?? ''}`;
  if (err instanceof IpsetError) return `${err.code} ${err.meaning} ${err.set ?? ''} ${String(err.entry ?? '')}`;
  if (err instanceof NetlinkError) return err.code;
  return '';
}
