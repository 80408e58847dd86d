// NetlinkError keeps its parts and builds its message from them in one
// place; a native failure's parts are taken over as they are, not
// formatted around.
import { constants } from 'node:os';
import t from 'tap';

import { NetlinkError, formatNetlinkError, fromNativeFailure } from '../../lib/netlink/errors.js';

t.test('a kernel refusal: every part kept, the message built from them', (t) => {
  const e = new NetlinkError({
    errno: constants.errno.EEXIST,
    code: 'EEXIST',
    operation: 'addService',
    subject: { protocol: 'tcp', address: '10.0.0.1', port: 80 },
    kernelMessage: 'service exists',
    text: 'File exists',
    hint: 'it already exists',
  });
  t.match(e, { name: 'NetlinkError', errno: constants.errno.EEXIST, code: 'EEXIST', operation: 'addService', kernelMessage: 'service exists', syscall: undefined, text: 'File exists', hint: 'it already exists', detail: undefined });
  t.same(e.subject, { protocol: 'tcp', address: '10.0.0.1', port: 80 });
  t.equal(e.message, 'addService {"protocol":"tcp","address":"10.0.0.1","port":80} failed: File exists (EEXIST): it already exists [kernel: service exists]');
  t.type(e, Error);
  t.end();
});

t.test('the parts a caller leaves out are left out of the message, and empty ones are undefined', (t) => {
  const e = new NetlinkError({ errno: 9, code: 'EBADF', operation: 'info', detail: 'the Ipvs handle is closed', kernelMessage: '' });
  t.equal(e.message, 'info failed: EBADF: the Ipvs handle is closed');
  t.equal(e.kernelMessage, undefined, 'an empty extended ack is no extended ack');
  t.equal(e.subject, undefined);
  t.equal(formatNetlinkError({ errno: 2, code: 'ENOENT', operation: 'getLink', subject: 'eth9' }), 'getLink eth9 failed: ENOENT');
  t.end();
});

t.test('a native failure of the conversation keeps the addon\'s parts', (t) => {
  const native = Object.assign(new Error('recvmmsg: Connection timed out (no reply from the kernel within 300 ms)'), {
    errno: constants.errno.ETIMEDOUT,
    code: 'ETIMEDOUT',
    syscall: 'recvmmsg',
    text: 'Connection timed out',
    detail: 'no reply from the kernel within 300 ms',
  });
  const e = fromNativeFailure(native, 'listServices') as NetlinkError;
  t.type(e, NetlinkError);
  t.match(e, { errno: constants.errno.ETIMEDOUT, code: 'ETIMEDOUT', operation: 'listServices', syscall: 'recvmmsg', text: 'Connection timed out', detail: 'no reply from the kernel within 300 ms', kernelMessage: undefined });
  t.equal(e.message, 'listServices failed: recvmmsg: Connection timed out (ETIMEDOUT): no reply from the kernel within 300 ms');
  t.notMatch(e.message, /\(no reply/, "the addon's own message is not wrapped");

  const open = fromNativeFailure(Object.assign(new Error('x'), { errno: 2, code: 'ENOENT', syscall: 'open', text: 'No such file or directory', detail: 'network namespace /run/netns/gone' }), 'Ipvs.open', '/run/netns/gone') as NetlinkError;
  t.equal(open.message, 'Ipvs.open /run/netns/gone failed: open: No such file or directory (ENOENT): network namespace /run/netns/gone');

  const plain = new TypeError('not a failure of the conversation');
  t.equal(fromNativeFailure(plain, 'x'), plain, 'an error without an errno passes through');
  t.end();
});
