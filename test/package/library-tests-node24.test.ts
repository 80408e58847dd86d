/** The library's unit tests and host ipset kernel tests, installed, on Node.js 24 (support/library-suites.ts). */
import { hostIpset, suite, unit } from './support/library-suites.js';

suite('node24', unit, 'unit tests');
suite('node24', hostIpset, 'host ipset kernel tests');
