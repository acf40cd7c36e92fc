"""Static constant-time check of compiled kernels: a taint analysis over the disassembly.

What it proves about each function of an object file, for all inputs: no conditional branch
depends on data loaded from the caller's arrays, no memory address is computed from such data,
and no division instruction appears at all. What the compiler did is what is checked, at every
optimisation level, so a compiler that turned a sign mask into a branch would be caught.

Three architectures are modelled (:data:`ARCHES`): x86-64 (``objdump -M intel``), AArch64 with
Advanced SIMD (``aarch64-linux-gnu-objdump`` or ``llvm-objdump-19``) and RV64GC with the vector
extension 1.0 (``llvm-objdump-19 --mattr=+v``). The model, common to all three:

* On entry every register is public (pointers, sizes, garbage); a value loaded from memory is
  secret unless it comes from a PC-relative constant, from read-only data addressed through a
  PC-relative pointer (``lea``/``adrp``/``auipc`` of a read-only section, plus public
  offsets; kept across spills), or from a stack slot that holds a public value (spills are
  tracked per slot).
* An instruction's destination becomes secret when any source is (the destination counts as a
  source when the instruction also reads it: x86 two-operand forms, multiply-accumulate, lane
  inserts, RVV tail/mask-undisturbed policies); zeroing idioms clear it; flags are secret when
  the flag-setting instruction read anything secret.
* Violations: a conditional branch on secret flags or a secret register; an indirect branch
  through a secret register (AArch64/RISC-V); a memory operand whose base, index, stride,
  index vector or mask is secret; any division instruction. Conditional selects (``cmov``,
  ``csel``) on secret flags are fine: they do not branch.
* Calls make caller-saved registers public (results of calls are not tracked). Each function
  is checked on its own, from a public entry: the tests check every function of an object, so
  that the stages a kernel keeps out of line and the helpers of unoptimised code are checked
  too; a value a caller passes in a register (a helper's argument at -O0, or an array element
  a compiler passes by value to a static function that read it) is taken as public there.
* Control flow is asked of the model (:meth:`Model.flow`). Branch targets of relocatable objects
  come from their relocations; an indirect jump (a jump table) may reach any instruction the
  object's data points to (RISC-V tables carry relocations) or else any instruction past the
  function's entry block.

Stores through anything but a tracked stack slot are not followed (the caller's arrays are
secret anyway); the stack is assumed not to be accessed both through a constant offset and a
run-time computed address for the same object. The analysis runs to a fixpoint over the
function's control-flow graph, so loops are covered.
"""

from __future__ import annotations

from .driver import ARCHES, check_function, check_object, disassemble
from .elf import relocations
from .model import Flow, Instr, Model, Reloc, State, Violation

__all__ = ["ARCHES", "Flow", "Instr", "Model", "Reloc", "State", "Violation", "check_function",
           "check_object", "disassemble", "relocations"]  # fmt: skip
