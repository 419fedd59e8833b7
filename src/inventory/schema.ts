// JSON Schema of an inventory file (published as schemas/inventory.json for editors). The
// loader checks structure itself to give Ansible-shaped hints; this is the editor-facing view.
import { Type } from '@sinclair/typebox';

const Vars = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Variables: name -> value. Secrets (names ending in password, secret, token ...) are masked in output.',
});

const HostVars = Type.Union([Type.Null(), Vars], {
  description:
    'Variables of one host. Connection: ssh_host/ansible_host, ssh_port/ansible_port, ssh_user/ansible_user, ssh_private_key_file/ansible_ssh_private_key_file, connection/ansible_connection (ssh|local).',
  examples: [{ ansible_host: '10.0.0.11', driver_info: { redfish_address: 'https://10.0.1.11' } }],
});

const inventoryGroupSchema = Type.Recursive(
  (Group) =>
    Type.Object(
      {
        hosts: Type.Optional(
          Type.Union([Type.Null(), Type.Record(Type.String(), HostVars)], {
            description:
              'Hosts of this group: a mapping of host name (ranges allowed: node[01:20]) to its variables or nothing.',
            examples: [{ 'node[01:04]': null, node05: { ansible_host: '10.0.0.15' } }],
          }),
        ),
        vars: Type.Optional(
          Type.Union([Type.Null(), Vars], {
            description: 'Variables for every host in this group (and its children).',
          }),
        ),
        children: Type.Optional(
          Type.Union([Type.Null(), Type.Record(Type.String(), Type.Union([Type.Null(), Group]))], {
            description: 'Child groups: a mapping of group name to its definition or nothing.',
          }),
        ),
      },
      { additionalProperties: false, description: 'A group: hosts, vars and children, all optional.' },
    ),
  { $id: 'InventoryGroup' },
);

export const inventorySchema = Type.Record(Type.String(), Type.Union([Type.Null(), inventoryGroupSchema]), {
  $id: 'https://tsbm.dev/schemas/inventory.json',
  title: 'tsbm inventory',
  description:
    'An Ansible YAML inventory: top-level keys are groups (usually just `all`); each group has optional hosts, vars and children. group_vars/ and host_vars/ folders beside the file add variables.',
  examples: [
    {
      all: {
        vars: { ssh_user: 'root' },
        children: {
          rack1: {
            hosts: { 'node[01:02]': null },
            vars: { image_source: 'oci://registry.example.com/os:42' },
          },
        },
      },
    },
  ],
});
