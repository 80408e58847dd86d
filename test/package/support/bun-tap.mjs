// Bun preload (bun --preload): the tests' `import t from 'tap'` gets
// tap-lite.mjs, the subset of tap that runs on Bun (see its header).
import { plugin } from 'bun';

const tapLite = JSON.stringify(new URL('./tap-lite.mjs', import.meta.url).pathname);
plugin({
  name: 'tap-lite',
  setup(build) {
    build.module('tap', () => ({ contents: `export * from ${tapLite}; export { default } from ${tapLite};`, loader: 'js' }));
  },
});
