// Public surface of templating.
export { checkTemplateSyntax, referencedVars, referencedVarsInCondition } from './analyze.js';
export { evalCondition } from './condition.js';
;
export { HELPERS } from './helpers/index.js';
export { renderString, renderText, renderValue } from './render.js';
export { truthy } from './truthy.js';
;
