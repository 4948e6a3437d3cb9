//! A NIC's tagging, emulated in the kernel for the namespace tests (this host has no 802.1Q
//! devices and no tc vlan action): small eBPF programs attached at a veth's egress with tcx,
//! each kept attached for as long as its link descriptor lives.
//!
//! - [`Program::PushOuter`] puts the outer tag on, as the uplink VLAN device does.
//! - [`Program::LoseInner`] puts the outer tag on in place of the inner one, as a NIC whose
//!   VLAN insertion overwrites the inner tag does (the mlx4 case).

use std::os::fd::{FromRawFd, OwnedFd};

const BPF_PROG_LOAD: i64 = 5;
const BPF_LINK_CREATE: i64 = 28;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_TCX_EGRESS: u32 = 47;
const HELPER_SKB_VLAN_PUSH: i32 = 18;
const HELPER_SKB_VLAN_POP: i32 = 19;

#[derive(Debug, Clone, Copy)]
pub enum Program {
    PushOuter { tpid: u16, vid: u16 },
    LoseInner { tpid: u16, vid: u16 },
}

/// One eBPF instruction: opcode, registers (src << 4 | dst), offset, immediate.
fn insn(code: u8, regs: u8, imm: i32) -> [u8; 8] {
    let mut bytes = [0u8; 8];
    bytes[0] = code;
    bytes[1] = regs;
    bytes[4..].copy_from_slice(&imm.to_le_bytes());
    bytes
}

const MOV64_REG: u8 = 0xbf;
const MOV64_IMM: u8 = 0xb7;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;

fn instructions(program: Program) -> Vec<[u8; 8]> {
    // r6 = ctx; each helper call clobbers r1-r5.
    let mut code = vec![insn(MOV64_REG, 0x16, 0)];
    let (tpid, vid) = match program {
        Program::PushOuter { tpid, vid } => (tpid, vid),
        Program::LoseInner { tpid, vid } => {
            // Pop whatever tags the frame carries (the inner one), then push the outer one.
            for _ in 0..2 {
                code.push(insn(MOV64_REG, 0x61, 0));
                code.push(insn(CALL, 0, HELPER_SKB_VLAN_POP));
            }
            (tpid, vid)
        }
    };
    code.push(insn(MOV64_REG, 0x61, 0));
    // The helper takes the protocol in network order.
    code.push(insn(MOV64_IMM, 0x02, i32::from(tpid.to_be())));
    code.push(insn(MOV64_IMM, 0x03, i32::from(vid)));
    code.push(insn(CALL, 0, HELPER_SKB_VLAN_PUSH));
    // TCX_PASS.
    code.push(insn(MOV64_IMM, 0x00, 0));
    code.push(insn(EXIT, 0, 0));
    code
}

fn bpf(command: i64, attr: &mut [u8; 128]) -> std::io::Result<OwnedFd> {
    // SAFETY: attr is a zero-padded bpf_attr of the size passed.
    let fd = unsafe { libc::syscall(libc::SYS_bpf, command, attr.as_mut_ptr(), attr.len()) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor returned by bpf(2).
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Attaches `program` at the egress of interface `ifindex` of the calling thread's namespace;
/// detached when the returned descriptor is dropped.
pub fn attach_egress(ifindex: u32, program: Program) -> OwnedFd {
    use std::os::fd::AsRawFd;
    let code: Vec<u8> = instructions(program).concat();
    let license = b"GPL\0";
    let mut log = vec![0u8; 4096];
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&BPF_PROG_TYPE_SCHED_CLS.to_ne_bytes());
    attr[4..8].copy_from_slice(&((code.len() / 8) as u32).to_ne_bytes());
    attr[8..16].copy_from_slice(&(code.as_ptr() as u64).to_ne_bytes());
    attr[16..24].copy_from_slice(&(license.as_ptr() as u64).to_ne_bytes());
    attr[24..28].copy_from_slice(&1u32.to_ne_bytes());
    attr[28..32].copy_from_slice(&(log.len() as u32).to_ne_bytes());
    attr[32..40].copy_from_slice(&(log.as_mut_ptr() as u64).to_ne_bytes());
    let prog = bpf(BPF_PROG_LOAD, &mut attr).unwrap_or_else(|e| {
        panic!(
            "loading the eBPF program: {e}: {}",
            String::from_utf8_lossy(&log).trim_end_matches('\0')
        )
    });
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&(prog.as_raw_fd() as u32).to_ne_bytes());
    attr[4..8].copy_from_slice(&ifindex.to_ne_bytes());
    attr[8..12].copy_from_slice(&BPF_TCX_EGRESS.to_ne_bytes());
    bpf(BPF_LINK_CREATE, &mut attr).expect("attaching the eBPF program with tcx")
}
