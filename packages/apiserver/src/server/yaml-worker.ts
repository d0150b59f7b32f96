/**
 * The YAML decoding worker (see yaml-decode.ts): parses one document per message off the main
 * thread and answers its JSON text, or the error a client should see. Imports nothing but `yaml`
 * and node builtins, so it runs from the sources and from `dist/` alike.
 */
import { parentPort } from 'node:worker_threads';
import { parseYamlToJsonText, type YamlJob, type YamlReady, type YamlReply } from './yaml-convert.ts';

parentPort?.on('message', (job: YamlJob) => {
  const reply: YamlReply = { id: job.id, ...parseYamlToJsonText(job.text, job.limits) };
  parentPort?.postMessage(reply);
});
// Loaded and listening: the decode time limit of the jobs sent so far starts now.
parentPort?.postMessage({ ready: true } satisfies YamlReady);
