"""The relocations of an ELF relocatable object, which the constant-time checker needs to
know where branches of an unlinked object go and what a PC-relative pointer points to."""

from __future__ import annotations

import struct
from pathlib import Path

from .model import Reloc

_SHT_RELA = 4
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR = 1, 2, 4

Relocations = dict[tuple[str, int], Reloc]  # (section name, offset) -> relocation there
CodeRefs = set[tuple[str, int]]  # (section name, offset) of code that data points to


def relocations(obj: Path) -> tuple[Relocations, CodeRefs]:
    """The first relocation at each (section name, offset) of a 64-bit ELF relocatable object,
    and the code addresses its loaded data refers to (jump tables); empty for anything else.

    objdump prints an unrelocated branch of a RISC-V object as a branch to itself, and the
    local symbols it relocates against all read ``.L0``: only the symbol table says where they
    point. RISC-V jump tables hold label differences left to the linker, so their targets show
    up here too."""
    try:
        data = obj.read_bytes()
        if data[:4] != b"\x7fELF" or data[4] != 2:
            return {}, set()
        e = "<" if data[5] == 1 else ">"
        shoff = struct.unpack_from(e + "Q", data, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)
        # sh_name sh_type sh_flags sh_addr sh_offset sh_size sh_link sh_info ...
        secs = [struct.unpack_from(e + "IIQQQQII", data, shoff + i * shentsize)
                for i in range(shnum)]  # fmt: skip

        def cstr(at: int) -> str:
            return data[at : data.index(b"\0", at)].decode(errors="replace")

        names = [cstr(secs[shstrndx][4] + s[0]) for s in secs]
        out: Relocations = {}
        refs: CodeRefs = set()
        for sec in secs:
            if sec[1] != _SHT_RELA or not 0 < sec[7] < shnum:
                continue
            symtab = secs[sec[6]]
            strtab = secs[symtab[6]]
            for k in range(sec[5] // 24):
                offset, info, addend = struct.unpack_from(e + "QQq", data, sec[4] + 24 * k)
                key = (names[sec[7]], offset)
                if key in out:  # R_RISCV_RELAX and friends follow the relocation proper
                    continue
                st_name, _, _, shndx, value = struct.unpack_from(
                    e + "IBBHQ", data, symtab[4] + 24 * (info >> 32)
                )
                defined = 0 < shndx < shnum
                flags = secs[shndx][2] if defined else 0
                symbol = cstr(strtab[4] + st_name) or (names[shndx] if defined else "")
                readonly = bool(flags & _SHF_ALLOC) and not flags & _SHF_WRITE
                out[key] = Reloc(info & 0xFFFFFFFF, symbol, defined and shndx == sec[7],
                                 readonly, value + addend)  # fmt: skip
                applied = secs[sec[7]][2]
                if (
                    flags & _SHF_EXECINSTR
                    and applied & _SHF_ALLOC
                    and not (applied & _SHF_EXECINSTR)
                ):
                    refs.add((names[shndx], value + addend))  # code address held in data
        return out, refs
    except (OSError, struct.error, ValueError, IndexError):
        return {}, set()
