// Anchor of the shared precompiled header of the Qt Test suites (tests/CMakeLists.txt).
