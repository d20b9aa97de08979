// mlir-opt's driver behaviour.
// `-` reads stdin:
// RUN: tcir-opt - < %s | filecheck %s --check-prefix=STDIN
// --time-passes prints MLIR's timing table on stderr, and stdout still parses:
// RUN: tcir-opt %s -p cse,canonicalize --time-passes 2>%t.timing | tcir-opt - | filecheck %s --check-prefix=STDIN
// RUN: filecheck %s --check-prefix=TIMING < %t.timing
// -t cuda without a kernel is an error:
// RUN: not tcir-opt %s -t cuda 2>&1 | filecheck %s --check-prefix=CUDA
// Every failing chunk of --split-input-file is reported:
// RUN: not tcir-opt %S/Inputs/wrong-expectations.mlir --split-input-file 2>&1 | filecheck %s --check-prefix=SPLIT
// --list-passes and --help-pass describe the passes from their code:
// RUN: tcir-opt --list-passes | filecheck %s --check-prefix=LIST
// RUN: tcir-opt --help-pass poly-tile | filecheck %s --check-prefix=HELP

// STDIN: tc.def @id(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>)

// TIMING: ===-------------------------------------------------------------------------===
// TIMING-NEXT: ... Execution time report ...
// TIMING-NEXT: ===-------------------------------------------------------------------------===
// TIMING-NEXT: Total Execution Time: {{[0-9.]+}} seconds
// TIMING: ----Wall Time----  ----Name----
// TIMING-DAG: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Parser
// TIMING-DAG: {{[0-9.]+}} ({{ *[0-9.]+}}%)  cse
// TIMING-DAG: {{[0-9.]+}} ({{ *[0-9.]+}}%)  canonicalize
// TIMING-DAG: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Output
// TIMING: {{[0-9.]+}} (100.0%)  Total

// CUDA: tcir-opt: error: target cuda: the module has no gpu.func kernel (lower it with convert-poly-to-gpu)

// SPLIT: wrong-expectations.mlir:4:10: error: 'tc.read' op expected 1 subscripts for a rank-1 tensor, got 2
// SPLIT: wrong-expectations.mlir:20:10: error: 'tc.read' op expected 1 subscripts for a rank-1 tensor, got 2

// LIST: poly-tile  -  Tile every permutable band of every `poly.scop` by `sizes`.
// LIST-NEXT: sizes=tuple[int, ...] (required): Tile sizes by schedule depth, outermost first (1: leave untiled).

// HELP: poly-tile
// HELP: `poly-tile{sizes=32,32,32}`: strip-mine permutable bands into tiles.
// HELP: sizes=tuple[int, ...] (required)

tc.def @id(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}
