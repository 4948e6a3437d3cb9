//! Classic BPF socket filters: a capture socket queues only what its program passes, so a busy
//! node's traffic never fills it. The programs themselves belong to their modules; this is the
//! instruction, the opcodes as linux/filter.h spells them, and attaching.

use crate::sock;
use std::os::fd::{AsRawFd, OwnedFd};

const SO_ATTACH_FILTER: i32 = 26;

// The opcodes' parts, OR-ed together as in linux/filter.h.
pub const BPF_LD: u16 = 0x00;
pub const BPF_LDX: u16 = 0x01;
pub const BPF_ALU: u16 = 0x04;
pub const BPF_JMP: u16 = 0x05;
pub const BPF_RET: u16 = 0x06;
pub const BPF_W: u16 = 0x00;
pub const BPF_H: u16 = 0x08;
pub const BPF_B: u16 = 0x10;
pub const BPF_ABS: u16 = 0x20;
pub const BPF_IND: u16 = 0x40;
pub const BPF_MSH: u16 = 0xa0;
pub const BPF_AND: u16 = 0x50;
pub const BPF_JEQ: u16 = 0x10;
pub const BPF_JGT: u16 = 0x20;
pub const BPF_JGE: u16 = 0x30;
pub const BPF_JSET: u16 = 0x40;
pub const BPF_JA: u16 = 0x00;
pub const BPF_K: u16 = 0x00;
/// `SKF_AD_OFF + SKF_AD_IFINDEX`: the index of the interface the frame crossed.
pub const SKF_AD_IFINDEX: u32 = 0xffff_f008;
/// A return value that keeps the frame (up to this many bytes).
pub const ACCEPT: u32 = 0xffff;

/// One classic BPF instruction (`struct sock_filter`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// An instruction without jumps.
pub const fn op(code: u16, k: u32) -> Instruction {
    Instruction {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// A conditional jump on the constant `k`: `jt` and `jf` instructions ahead.
pub const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Instruction {
    Instruction {
        code: BPF_JMP | code | BPF_K,
        jt,
        jf,
        k,
    }
}

#[repr(C)]
struct FilterProgram {
    len: u16,
    filter: *const Instruction,
}

/// Attaches `program` to socket `fd`: the kernel then queues only what it passes.
pub fn attach_filter(fd: &OwnedFd, program: &[Instruction]) -> std::io::Result<()> {
    let fprog = FilterProgram {
        len: program.len() as u16,
        filter: program.as_ptr(),
    };
    // SAFETY: fprog points to `len` instructions that outlive the call (the kernel copies them).
    sock::check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ATTACH_FILTER,
            &fprog as *const FilterProgram as *const libc::c_void,
            std::mem::size_of::<FilterProgram>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}
