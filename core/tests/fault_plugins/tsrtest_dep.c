/*
 * tsrtest_dep.c - libtsrtest-dep.so, a dependency of the `missing-dep` fault
 * plugin. It is built into a directory that is on no search path, so the
 * dynamic loader cannot find it when the plugin is opened: the core must report
 * the loader's own text ("libtsrtest-dep.so: cannot open shared object file").
 */
__attribute__((visibility("default"))) int tsrtest_dep_answer(void);
__attribute__((visibility("default"))) int tsrtest_dep_answer(void) { return 42; }
