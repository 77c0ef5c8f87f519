export { pipelineRoles } from './roles.js';
