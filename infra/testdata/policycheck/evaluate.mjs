// evaluate.mjs evaluates AWS requests against IAM policies with
// @cloud-copilot/iam-simulate (AGPL-3.0: a devDependency run by the infra
// tests only, never shipped with the stack or the functions).
//
// Input (stdin): a JSON array of requests
//   {
//     "id": "row id echoed back",
//     "principal": "arn:aws:sts::111122223333:assumed-role/Role/Session" | "s3.amazonaws.com",
//     "action": "s3:GetObject",
//     "resource": "arn:aws:s3:::bucket/key",
//     "resourceAccount": "111122223333",
//     "context": { "aws:SecureTransport": "true", ... },
//     "identityPolicies": [ { "name": "...", "policy": { IAM policy } } ],
//     "resourcePolicy": { IAM policy } | null
//   }
// Output (stdout): a JSON array, one result per request and in order:
//   {
//     "id": "...",
//     "result": "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied" | "Error",
//     "errors": "validation errors when result is Error",
//     "identity": "identity policies' result", "resourcePolicy": "resource policy's result",
//     "blockedBy": [...], "denials": [...], "grants": [...], "ignoredContextKeys": [...]
//   }
// Every request is evaluated in Strict mode: the context keys given are the
// whole request context. The process exits non-zero only when its input is
// unreadable; a request the engine rejects is reported as "Error".
import { getDenialReasons, getGrantReasons, runSimulation } from '@cloud-copilot/iam-simulate'

async function readStdin() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

async function evaluate(req) {
  const simulation = {
    request: {
      principal: req.principal,
      action: req.action,
      resource: { resource: req.resource, accountId: req.resourceAccount },
      contextVariables: req.context ?? {}
    },
    identityPolicies: req.identityPolicies ?? [],
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: req.resourcePolicy ?? undefined
  }
  let response
  try {
    response = await runSimulation(simulation, { simulationMode: 'Strict' })
  } catch (err) {
    return { id: req.id, result: 'Error', errors: String(err?.stack ?? err) }
  }
  if (response.resultType === 'error') {
    return { id: req.id, result: 'Error', errors: JSON.stringify(response.errors) }
  }
  const one = response.resultType === 'single' ? response.result : response.results[0]
  const analysis = one?.analysis
  const out = {
    id: req.id,
    result: response.overallResult,
    identity: analysis?.identityAnalysis?.result,
    resourcePolicy: analysis?.resourceAnalysis?.result,
    ignoredContextKeys: one?.ignoredContextKeys ?? []
  }
  if (response.resultType === 'wildcard') {
    out.errors = `the resource ${req.resource} was simulated as a wildcard (${response.results.length} patterns); give a concrete ARN`
  }
  if (analysis) {
    if (analysis.blockedBy?.length) out.blockedBy = analysis.blockedBy
    out.denials = response.overallResult === 'Allowed' ? [] : getDenialReasons(analysis)
    out.grants = response.overallResult === 'Allowed' ? getGrantReasons(analysis) : []
  }
  return out
}

const input = JSON.parse(await readStdin())
if (!Array.isArray(input)) {
  console.error('evaluate.mjs: stdin must be a JSON array of requests')
  process.exit(2)
}
const results = []
for (const req of input) results.push(await evaluate(req))
process.stdout.write(JSON.stringify(results))
