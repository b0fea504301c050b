package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// iamSimulateVersion is the pinned engine (package.json devDependencies).
const iamSimulateVersion = "0.1.173"

// namedPolicy is an identity policy as iam-simulate takes it.
type namedPolicy struct {
	Name   string `json:"name"`
	Policy any    `json:"policy"`
}

// policyModel holds a template's policies, resolved to concrete ARNs in
// fakeAccount: each role's identity policies, each resource's policy.
type policyModel struct {
	r *cfnResolver
	// identity maps a role ARN to its inline, attached and managed policies.
	identity map[string][]namedPolicy
	// roleByID maps a role's logical id to its ARN.
	roleByID map[string]string
	// resource maps the ARN a resource policy belongs to (a bucket, queue,
	// topic, key, function, role trust, secret or table) to the policy.
	resource map[string]map[string]any
}

// knownManagedPolicies are the AWS managed policies the template may attach,
// with their documents (managed policies are not in the template).
var knownManagedPolicies = map[string]any{
	"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": obj{
		"Version": "2012-10-17",
		"Statement": []any{obj{
			"Effect":   "Allow",
			"Action":   []any{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"},
			"Resource": "*",
		}},
	},
}

// newPolicyModel collects and resolves every policy of the template.
func newPolicyModel(stackName string, doc map[string]any) (*policyModel, error) {
	m := &policyModel{
		r:        newCFNResolver(stackName, doc),
		identity: map[string][]namedPolicy{},
		roleByID: map[string]string{},
		resource: map[string]map[string]any{},
	}
	var errs []error
	fail := func(id string, err error) { errs = append(errs, fmt.Errorf("%s: %w", id, err)) }
	ids := make([]string, 0, len(m.r.resources))
	for id := range m.r.resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	roleByName := map[string]string{}

	// Roles first: policies attach to them by name.
	for _, id := range ids {
		res := m.r.resources[id]
		if res["Type"] != "AWS::IAM::Role" {
			continue
		}
		props, _ := res["Properties"].(map[string]any)
		arn, err := m.r.resolveString(obj{"Fn::GetAtt": []any{id, "Arn"}})
		if err != nil {
			fail(id, err)
			continue
		}
		name, _ := m.r.physicalName(id)
		m.roleByID[id], roleByName[name] = arn, arn
		m.identity[arn] = nil
		if trust, err := m.resolvePolicy(props["AssumeRolePolicyDocument"]); err != nil {
			fail(id, err)
		} else if trust != nil {
			m.resource[arn] = trust
		}
		for _, p := range asList(props["Policies"]) {
			p, _ := p.(map[string]any)
			if p == nil {
				continue
			}
			doc, err := m.resolvePolicy(p["PolicyDocument"])
			if err != nil {
				fail(id, err)
				continue
			}
			pname, _ := m.r.resolveString(p["PolicyName"])
			m.identity[arn] = append(m.identity[arn], namedPolicy{Name: pname, Policy: doc})
		}
		for _, ref := range asList(props["ManagedPolicyArns"]) {
			if ref == nil {
				continue
			}
			managed, err := m.r.resolveString(ref)
			if err != nil {
				fail(id, err)
				continue
			}
			doc, ok := knownManagedPolicies[managed]
			if !ok {
				fail(id, fmt.Errorf("managed policy %s: add its document to knownManagedPolicies", managed))
				continue
			}
			m.identity[arn] = append(m.identity[arn], namedPolicy{Name: managed, Policy: doc})
		}
	}

	for _, id := range ids {
		res := m.r.resources[id]
		props, _ := res["Properties"].(map[string]any)
		typ, _ := res["Type"].(string)
		switch typ {
		case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
			doc, err := m.resolvePolicy(props["PolicyDocument"])
			if err != nil {
				fail(id, err)
				continue
			}
			if props["Users"] != nil || props["Groups"] != nil {
				fail(id, errors.New("policies for users or groups are not modelled"))
			}
			for _, ref := range asList(props["Roles"]) {
				if ref == nil {
					continue
				}
				name, err := m.r.resolveString(ref)
				if err != nil {
					fail(id, err)
					continue
				}
				arn, ok := roleByName[name]
				if !ok {
					fail(id, fmt.Errorf("attached to role %q, which is not in the template", name))
					continue
				}
				m.identity[arn] = append(m.identity[arn], namedPolicy{Name: id, Policy: doc})
			}
		case "AWS::SNS::TopicPolicy":
			m.addResourcePolicy(id, props["PolicyDocument"], props["Topics"], func(ref string) string { return ref }, fail)
		case "AWS::SQS::QueuePolicy":
			m.addResourcePolicy(id, props["PolicyDocument"], props["Queues"], queueARNFromURL, fail)
		case "AWS::S3::BucketPolicy":
			m.addResourcePolicy(id, props["PolicyDocument"], props["Bucket"], func(name string) string { return "arn:aws:s3:::" + name }, fail)
		case "AWS::SecretsManager::ResourcePolicy":
			m.addResourcePolicy(id, props["ResourcePolicy"], props["SecretId"], func(arn string) string { return arn }, fail)
		case "AWS::KMS::Key":
			m.addResourcePolicy(id, props["KeyPolicy"], obj{"Fn::GetAtt": []any{id, "Arn"}}, func(arn string) string { return arn }, fail)
		case "AWS::DynamoDB::Table":
			if rp, _ := props["ResourcePolicy"].(map[string]any); rp != nil {
				m.addResourcePolicy(id, rp["PolicyDocument"], obj{"Fn::GetAtt": []any{id, "Arn"}}, func(arn string) string { return arn }, fail)
			}
		case "AWS::SNS::Topic", "AWS::SQS::Queue", "AWS::S3::Bucket", "AWS::SecretsManager::Secret":
			// Their policies are separate resources, handled above.
		case "AWS::Lambda::Permission":
			if err := m.addLambdaPermission(props); err != nil {
				fail(id, err)
			}
		}
	}
	return m, errors.Join(errs...)
}

func (m *policyModel) resolvePolicy(doc any) (map[string]any, error) {
	if doc == nil {
		return nil, nil
	}
	rv, err := m.r.resolve(doc)
	if err != nil {
		return nil, err
	}
	p, ok := rv.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("policy document %s is not an object", asJSON(rv))
	}
	return p, nil
}

// addResourcePolicy attaches a policy to each target (refs resolved, then
// turned into the resource ARN by toARN).
func (m *policyModel) addResourcePolicy(id string, doc, targets any, toARN func(string) string, fail func(string, error)) {
	policy, err := m.resolvePolicy(doc)
	if err != nil {
		fail(id, err)
		return
	}
	for _, t := range asList(targets) {
		ref, err := m.r.resolveString(t)
		if err != nil {
			fail(id, err)
			continue
		}
		arn := toARN(ref)
		if _, dup := m.resource[arn]; dup {
			fail(id, fmt.Errorf("a second resource policy for %s", arn))
			continue
		}
		m.resource[arn] = policy
	}
}

// addLambdaPermission adds one statement to the function's resource policy,
// written as Lambda writes AddPermission into its policy document.
func (m *policyModel) addLambdaPermission(props map[string]any) error {
	str := func(key string) (string, error) {
		if props[key] == nil {
			return "", nil
		}
		return m.r.resolveString(props[key])
	}
	fn, err := str("FunctionName")
	if err != nil {
		return err
	}
	if !strings.HasPrefix(fn, "arn:") {
		fn = fmt.Sprintf("arn:%s:lambda:%s:%s:function:%s", fakePartition, fakeRegion, fakeAccount, fn)
	}
	action, _ := str("Action")
	principal, _ := str("Principal")
	sourceArn, err := str("SourceArn")
	if err != nil {
		return err
	}
	sourceAccount, _ := str("SourceAccount")
	if props["PrincipalOrgID"] != nil || props["FunctionUrlAuthType"] != nil || props["EventSourceToken"] != nil {
		return fmt.Errorf("Lambda permission properties %s are not modelled", asJSON(props))
	}
	st := obj{"Effect": "Allow", "Action": action, "Resource": fn}
	switch {
	case strings.HasSuffix(principal, ".amazonaws.com"):
		st["Principal"] = obj{"Service": principal}
	case principal == "*":
		st["Principal"] = "*"
	default:
		st["Principal"] = obj{"AWS": principal}
	}
	cond := obj{}
	if sourceArn != "" {
		cond["ArnLike"] = obj{"AWS:SourceArn": sourceArn}
	}
	if sourceAccount != "" {
		cond["StringEquals"] = obj{"AWS:SourceAccount": sourceAccount}
	}
	if len(cond) > 0 {
		st["Condition"] = cond
	}
	policy := m.resource[fn]
	if policy == nil {
		policy = obj{"Version": "2012-10-17", "Statement": []any{}}
		m.resource[fn] = policy
	}
	policy["Statement"] = append(policy["Statement"].([]any), st)
	return nil
}

// queueARNFromURL turns https://sqs.<region>.amazonaws.com/<account>/<name>
// into the queue's ARN.
func queueARNFromURL(url string) string {
	parts := strings.Split(url, "/")
	if len(parts) < 5 || !strings.HasPrefix(parts[2], "sqs.") {
		return url
	}
	region := strings.Split(parts[2], ".")[1]
	return fmt.Sprintf("arn:%s:sqs:%s:%s:%s", fakePartition, region, parts[3], parts[4])
}

// resourcePolicyFor returns the resource policy that governs arn: the
// bucket's for an object, the table's for an index, the resource's own else.
func (m *policyModel) resourcePolicyFor(arn string) map[string]any {
	owner := arn
	switch {
	case strings.HasPrefix(arn, "arn:aws:s3:::"):
		bucket, _, _ := strings.Cut(strings.TrimPrefix(arn, "arn:aws:s3:::"), "/")
		owner = "arn:aws:s3:::" + bucket
	case strings.Contains(arn, ":dynamodb:") && strings.Contains(arn, "/index/"):
		owner, _, _ = strings.Cut(arn, "/index/")
	}
	return m.resource[owner]
}

// hasSecureTransportDeny reports whether policy denies requests without TLS.
func hasSecureTransportDeny(policy map[string]any) bool {
	for _, st := range asList(policy["Statement"]) {
		st, _ := st.(map[string]any)
		if st == nil || st["Effect"] != "Deny" {
			continue
		}
		if strings.Contains(asJSON(st["Condition"]), `"aws:SecureTransport":"false"`) {
			return true
		}
	}
	return false
}

// simRequest is one request for evaluate.mjs (see that file for the API).
type simRequest struct {
	ID               string         `json:"id"`
	Principal        string         `json:"principal"`
	Action           string         `json:"action"`
	Resource         string         `json:"resource"`
	ResourceAccount  string         `json:"resourceAccount"`
	Context          map[string]any `json:"context"`
	IdentityPolicies []namedPolicy  `json:"identityPolicies"`
	ResourcePolicy   map[string]any `json:"resourcePolicy,omitempty"`
}

// simResult is evaluate.mjs's answer to one simRequest.
type simResult struct {
	ID                 string   `json:"id"`
	Result             string   `json:"result"`
	Errors             string   `json:"errors"`
	Identity           string   `json:"identity"`
	ResourcePolicy     string   `json:"resourcePolicy"`
	BlockedBy          []string `json:"blockedBy"`
	Denials            []any    `json:"denials"`
	Grants             []any    `json:"grants"`
	IgnoredContextKeys []string `json:"ignoredContextKeys"`
}

// request builds the simulation of principal calling action on resource:
// a role session carries its role's identity policies, and the resource's
// policy applies whoever calls.
func (m *policyModel) request(id string, principal policyPrincipal, action, resource string, ctx map[string]any) simRequest {
	req := simRequest{
		ID:               id,
		Principal:        principal.arn,
		Action:           action,
		Resource:         resource,
		ResourceAccount:  fakeAccount,
		Context:          ctx,
		IdentityPolicies: []namedPolicy{},
		ResourcePolicy:   m.resourcePolicyFor(resource),
	}
	if principal.role != "" {
		req.IdentityPolicies = append(req.IdentityPolicies, m.identity[principal.role]...)
	}
	return req
}

// policyPrincipal is who makes a request: a role session (arn is the
// assumed-role session, role the role's ARN) or an AWS service principal.
type policyPrincipal struct {
	label string // for the report
	arn   string
	role  string
}

// roleSession is the principal a Lambda function's code runs as: Lambda
// names the session after the function.
func roleSession(label, roleARN, functionName string) policyPrincipal {
	name := roleARN[strings.LastIndex(roleARN, "/")+1:]
	return policyPrincipal{
		label: label,
		arn:   fmt.Sprintf("arn:%s:sts::%s:assumed-role/%s/%s", fakePartition, fakeAccount, name, functionName),
		role:  roleARN,
	}
}

func servicePrincipal(service string) policyPrincipal {
	return policyPrincipal{label: service, arn: service}
}

// iamSimulateScript locates the engine and its driver script, failing the
// test with what to do when the npm packages are not installed.
func iamSimulateScript(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the IAM policy check needs Node.js (>= 20) on PATH: %v", err)
	}
	pkg := filepath.Join("..", "node_modules", "@cloud-copilot", "iam-simulate", "package.json")
	raw, err := os.ReadFile(pkg)
	if err != nil {
		t.Fatalf("the IAM policy check needs the npm package @cloud-copilot/iam-simulate (%v): run `make deps` (npm ci) in the repository root", err)
	}
	var meta struct{ Version string }
	if err := json.Unmarshal(raw, &meta); err != nil || meta.Version != iamSimulateVersion {
		t.Fatalf("node_modules has @cloud-copilot/iam-simulate %q, package.json pins %s: run `make deps` (npm ci)", meta.Version, iamSimulateVersion)
	}
	script, err = filepath.Abs(filepath.Join("testdata", "policycheck", "evaluate.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}

// simulate evaluates every request in one Node process.
func simulate(t *testing.T, reqs []simRequest) map[string]simResult {
	t.Helper()
	node, script := iamSimulateScript(t)
	in, err := json.Marshal(reqs)
	if err != nil {
		t.Fatalf("marshal requests: %v", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(node, script)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	var results []simResult
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		t.Fatalf("parse the output of %s: %v\n%s\n%s", script, err, stdout.String(), stderr.String())
	}
	if len(results) != len(reqs) {
		t.Fatalf("%s answered %d of %d requests", script, len(results), len(reqs))
	}
	out := make(map[string]simResult, len(results))
	for _, r := range results {
		out[r.ID] = r
	}
	return out
}
