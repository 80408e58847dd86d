// The TypeScript layer's checks: names, options and structured entries are
// validated (TypeError/RangeError naming the field) before anything is sent.
import t from 'tap';

import { entryText } from '../../lib/ipset/entries.js';
import * as check from '../../lib/ipset/validate.js';

t.test('set names', async (t) => {
  t.equal(check.setName('ok-name'), 'ok-name');
  t.throws(() => check.setName(''), TypeError);
  t.throws(() => check.setName('x'.repeat(32)), RangeError);
  t.throws(() => check.setName('x'.repeat(32)), { message: /name must be at most 31 bytes/ });
  t.throws(() => check.setName(5 as unknown as string), TypeError);
  t.throws(() => check.setType('hash:mac'), TypeError);
});

t.test('create options', async (t) => {
  t.same(check.createOptions({ family: 'inet6', hashSize: 4096, counters: true }), { family: 'inet6', hashSize: 4096, counters: true });
  t.throws(() => check.createOptions({ hashsize: 1 }), { name: 'TypeError', message: /unknown create option 'hashsize'/ });
  t.throws(() => check.createOptions({ timeout: -1 }), RangeError);
  t.throws(() => check.createOptions({ family: 'ipv4' }), TypeError);
});

t.test('element options print as ipset save prints them', async (t) => {
  t.equal(
    check.elementOptionsText({ comment: 'x y', timeout: 5, bytes: 2n, packets: 1, nomatch: true, skbmark: [0x10, 0xff], skbprio: '1:2', skbqueue: 3 }),
    ' timeout 5 nomatch packets 1 bytes 2 comment "x y" skbmark 0x10/0xff skbprio 1:2 skbqueue 3',
  );
  t.throws(() => check.elementOptionsText({ comment: 'a"b' }), TypeError);
  t.throws(() => check.elementOptionsText({ comment: 'x'.repeat(256) }), RangeError);
  t.throws(() => check.elementOptionsText({ timeout: 1.5 }), RangeError);
  t.throws(() => check.elementOptionsText({ exist: true }), TypeError, 'exist is not an element option');
  t.equal(check.elementOptionsText({ exist: true }, ['exist']), '');
});

t.test('structured entries', async (t) => {
  t.equal(entryText('hash:ip', { ip: '10.0.0.1' }), '10.0.0.1');
  t.equal(entryText('hash:net', { ip: '10.0.0.0', cidr: 24, nomatch: true }), '10.0.0.0/24 nomatch');
  t.equal(entryText('hash:ip,port', { ip: '10.0.0.1', proto: 'udp', port: 53, timeout: 5 }), '10.0.0.1,udp:53 timeout 5');
  t.equal(entryText('hash:ip,port,net', { ip: '10.0.0.1', proto: 'tcp', port: 80, ip2: '10.1.0.0', cidr2: 16 }), '10.0.0.1,tcp:80,10.1.0.0/16');
  t.equal(entryText('hash:net,iface', { ip: '10.0.0.0', cidr: 8, iface: 'eth0', physdev: true }), '10.0.0.0/8,physdev:eth0');
  t.equal(entryText('bitmap:port', { port: 80 }), '80');
  t.equal(entryText('list:set', { name: 'other' }), 'other');
  t.throws(() => entryText('hash:ip', 'a\nb', 'entry 3'), { name: 'TypeError', message: /entry 3 must not contain a newline/ });
  t.throws(() => entryText('hash:ip,port', { ip: '10.0.0.1' }, 'entry 0'), { name: 'TypeError', message: /entry 0.port is required/ });
  t.throws(() => entryText('hash:ip', 7 as unknown as string), TypeError);
});
