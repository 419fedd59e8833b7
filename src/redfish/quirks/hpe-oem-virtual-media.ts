// iLO 4 and early iLO 5 firmware expose virtual media only through HPE OEM actions
// (`Oem.Hpe.Actions["#HpeiLOVirtualMedia.InsertVirtualMedia"]`), which take just `Image`.
// Used when the standard InsertMedia/EjectMedia actions are missing.
type Json = Record<string, unknown>;

export interface OemMediaTargets {
  insert?: string;
  eject?: string;
}

export function hpeOemMediaTargets(slot: Json): OemMediaTargets {
  const oem = slot.Oem as Json | undefined;
  const vendor = (oem?.Hpe ?? oem?.Hp) as Json | undefined;
  const actions = vendor?.Actions as Json | undefined;
  const target = (name: string): string | undefined => {
    const a = actions?.[name] as Json | undefined;
    return typeof a?.target === 'string' ? a.target : undefined;
  };
  const insert = target('#HpeiLOVirtualMedia.InsertVirtualMedia');
  const eject = target('#HpeiLOVirtualMedia.EjectVirtualMedia');
  return { ...(insert ? { insert } : {}), ...(eject ? { eject } : {}) };
}
