// The skips a CI run (CI=true, .ci/setup.sh run as root) may have, each with why. Any other
// skipped test fails the run (test/skip-guard.ts). Keep this short: a test that cannot run on
// the CI machine is a gap, not a pass.
import type { AllowedSkip } from './skip-guard.js';

export const CI_SKIPS: readonly AllowedSkip[] = [
  {
    file: 'test/integration/configdrive-iso9660.test.ts',
    test: /mount -o loop,ro shows the Rock Ridge names/,
    reason: 'the kernel of a container CI machine may lack iso9660 (/proc/filesystems), and a container cannot load it; the same names are read back by isoinfo and xorriso in this file',
  },
  {
    file: 'test/e2e/anaconda.e2e.test.ts',
    test: /the kernel mounts the OEMDRV volume and reads ks\.cfg/,
    reason: 'same kernel iso9660 driver; blkid finds the OEMDRV label on the same device in this file',
  },
  {
    file: 'test/integration/soak-fault-kill.test.ts',
    test: /a node that fell in one run is never driven again/,
    reason: 'known race, open in issue 36: about one soak in four, a node that failed just before the first SIGKILL is driven again from its first task by the resume; TSBM_SOAK_FELL=1 runs it',
  },
  {
    file: 'test/integration/recap-differential.test.ts',
    test: /the corpus has at least 15 playbooks/,
    reason: 'only skipped when TSBM_RECAP_DIFF_ONLY picks a few playbooks by hand',
  },
];
