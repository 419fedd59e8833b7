// Labs started while this is on use the TypeScript sgdisk stand-in even where gdisk is
// installed (TSBM_SIM_FORCE_JS_SGDISK, read by the lab at start).

/** Turns the stand-in on for the labs a suite starts; the returned function puts the old value back. */
export function forceJsSgdisk(): () => void {
  const saved = process.env.TSBM_SIM_FORCE_JS_SGDISK;
  process.env.TSBM_SIM_FORCE_JS_SGDISK = '1';
  return () => {
    if (saved === undefined) delete process.env.TSBM_SIM_FORCE_JS_SGDISK;
    else process.env.TSBM_SIM_FORCE_JS_SGDISK = saved;
  };
}
