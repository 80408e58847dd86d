// The CommonJS side of the strict consumer: TypeScript compiles this import
// to require(), which Node.js 22.12+ and Bun answer with the ES module.
import { Ipset, NetlinkError } from 'ipvs-netlink';
import type { SetListing } from 'ipvs-netlink';

export async function read(name: string): Promise<SetListing | undefined> {
  const ipset = await Ipset.open();
  try {
    return await ipset.list(name);
  } catch (e) {
    if (e instanceof NetlinkError && e.code === 'ENOENT') return undefined;
    throw e;
  } finally {
    ipset.close();
  }
}

read('pkg-test-no-such-set').then(
  (listing) => console.log(JSON.stringify({ found: listing !== undefined })),
  (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  },
);
