// Preloaded into the arm64 Node.js that runs under qemu-user: a test that
// starts a child with process.execPath (an arm64 binary, which this host's
// kernel cannot execute without binfmt) gets the emulator's wrapper script
// instead, named by PACKAGE_TEST_EXEC_PATH.
if (process.env.PACKAGE_TEST_EXEC_PATH) process.execPath = process.env.PACKAGE_TEST_EXEC_PATH;
