import { readdirSync, readFileSync } from 'node:fs';

// Process groups left by a daemon that died while a command ran. In the sandbox they die with the daemon
// (bwrap's --die-with-parent); with the sandbox off they would run on, so the call journal records each
// command's process group and its leader's identity, and the next start kills what is left. A process id is
// reused once its process is gone, so a group is only killed when it is provably the same: same boot, and
// every member started no earlier than the recorded leader (and the leader, if still there, is the same
// process). Linux only (/proc); elsewhere nothing is recorded and nothing is killed.

interface Stat {
  pid: number;
  group: number;
  /** Start time after boot, in clock ticks (proc(5), field 22). */
  start: number;
}

function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

function readStat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // `pid (comm) state ppid pgrp ...`: comm may hold spaces and parentheses, so split after the last `)`.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const group = Number(rest[2]);
  const start = Number(rest[19]);
  if (!Number.isSafeInteger(group) || !Number.isSafeInteger(start)) return null;
  return { pid, group, start };
}

/** `<boot id>:<start ticks>` of a running process, or null when it cannot be told. */
export function processIdentity(pid: number): string | null {
  const boot = bootId();
  const stat = readStat(pid);
  return boot && stat ? `${boot}:${stat.start}` : null;
}

/** Kills (SIGKILL) what is left of a recorded process group; returns how many processes it signalled. */
export function killLeftoverGroup(group: number, identity: string | null): number {
  if (!identity) return 0;
  const [boot, startText] = identity.split(':');
  const recordedStart = Number(startText);
  if (!boot || boot !== bootId() || !Number.isSafeInteger(recordedStart)) return 0;
  const leader = readStat(group);
  if (leader && leader.start !== recordedStart) return 0; // the number belongs to another process now
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  let killed = 0;
  for (const name of pids) {
    const stat = readStat(Number(name));
    if (!stat || stat.group !== group || stat.start < recordedStart) continue;
    try {
      process.kill(stat.pid, 'SIGKILL');
      killed += 1;
    } catch {
      // gone meanwhile
    }
  }
  return killed;
}
