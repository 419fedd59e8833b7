// Argument fragments shared by the file-writing modules (one definition, same docs everywhere).
import { Type } from '../../schema/type-builder.js';

export const modeArg = Type.Optional(
  Type.Union([Type.String(), Type.Integer()], {
    description: "Permissions as an octal string, e.g. '0644' (a bare 0644 is read as the octal digits written).",
  }),
);
export const ownerArg = Type.Optional(Type.String({ description: 'Owner (user name or uid); needs become.' }));
export const groupArg = Type.Optional(Type.String({ description: 'Group (name or gid); needs become.' }));
