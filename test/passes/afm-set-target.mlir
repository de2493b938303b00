// afm-set-target resolves a target name once and stamps it on the module;
// the target-dependent passes read it from there.
// RUN: afm-opt %s --afm-set-target=target=apple-m2 | FileCheck %s --check-prefix=M2
// RUN: afm-opt %s "--afm-set-target=target=apple-m2 target-os=linux" | FileCheck %s --check-prefix=M2-LINUX
// RUN: afm-opt %s --afm-set-target=target=host | FileCheck %s --check-prefix=HOST
// RUN: not afm-opt %s --afm-set-target=target=pdp-11 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not afm-opt %s "--afm-set-target=target=apple-m2 target-os=plan9" 2>&1 | FileCheck %s --check-prefix=BAD-OS

// A table name is recorded as given, with no OS override.
// M2: module attributes {afm.target = #afm.target<name = "apple-m2">}

// An OS override travels with it (Apple code paths linked for Linux).
// M2-LINUX: module attributes {afm.target = #afm.target<name = "apple-m2", os = "linux">}

// `host` is recorded as the table entry it resolved to, never as "host".
// HOST: afm.target = #afm.target<name = "{{x86-64-v[34](-vnni)?|amd-zen4|intel-sapphire-rapids|aarch64-generic}}">

// An unknown name lists the known ones.
// BAD: error: unknown target 'pdp-11'; known targets: host, x86-64-v3,

// So does an unknown OS.
// BAD-OS: error: unknown target OS 'plan9'; expected 'linux' or 'macos'
module {
}
