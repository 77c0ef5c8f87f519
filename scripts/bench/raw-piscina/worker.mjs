// The worker of loop.mjs: imports the module under test once, and calls it per task.
import { workerData } from 'node:worker_threads';

const { default: run } = await import(workerData.module);

export default (task) => run(task);
