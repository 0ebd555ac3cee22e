// A shared object named libssl.so.3 that holds none of OpenSSL's functions
// (tests/node/daemon_cli_test.cc): a lean meshnode must refuse it, naming
// the first function it lacks, rather than call through a null pointer.
extern "C" int meshnode_test_not_libssl() { return 0; }
