package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// The policy check: every access the deployed system needs, evaluated by a
// real IAM policy engine (@cloud-copilot/iam-simulate, through
// testdata/policycheck/evaluate.mjs) against the policies of each
// synthesized configuration, as AWS evaluates them: a role session gets its
// role's identity policies and the resource's policy (same account); a
// service principal (S3, CloudWatch, EventBridge, Lambda) is allowed only by
// the resource's policy or key policy, with the aws:SourceArn and
// aws:SourceAccount the service sends.

// policySystem is what the accesses refer to, read from one template.
type policySystem struct {
	tpl   policyTemplate
	model *policyModel

	predictor, monitor, notifications, autoDelete policyPrincipal
	mapWidget                                     policyPrincipal
	// jobFeeder is the job engine's function (jobfeeder.go), its ARN and
	// its schedule.
	jobFeeder                        policyPrincipal
	jobFeederFunction, jobFeederRule string
	// functions are the Lambda functions of the stack with their roles and
	// log groups, for the AssumeRole and log rows.
	functions []policyFunction

	bucket, object string // the upload bucket's ARN, an object S3 would notify about
	queue, table   string
	// uploadRule and uploadRuleDLQ are, in eventbridge mode, the rule that
	// sends the uploads to the queue and its target's dead-letter queue.
	uploadRule, uploadRuleDLQ string
	failuresQueue             string // the monitor's failure destination and the schedule's DLQ, if any
	secret                    string // the API key secret's ARN (a stand-in suffix for a name)
	topic, topicKey           string
	alarms                    []string // ARNs of the alarms that notify the topic
	monitorFunction           string
	rule                      string // the monitor's schedule
	accessLogs                string // the access log bucket's ARN, if created
	autoDeleteBucket          []string

	// The results pipe (events=true): its role's session, its ARN, the
	// stream it reads, the bus it puts on and its dead-letter queue.
	resultsPipe                          policyPrincipal
	pipe, stream, bus, resultEventsQueue string
}

type policyFunction struct {
	id, arn, logGroup string
	principal         policyPrincipal
}

// newPolicySystem finds the parts of the pipeline in the template: each
// fact is read from the resource that makes it true at run time (the
// notification configuration names the bucket and queue, the function's
// environment names the secret, its LoggingConfig its log group).
func newPolicySystem(t *testing.T, tpl policyTemplate) *policySystem {
	t.Helper()
	model, err := newPolicyModel(tpl.cfg.StackName, tpl.doc)
	if err != nil {
		t.Fatalf("%s: resolve the template's policies: %v", tpl.name, err)
	}
	r := model.r
	s := &policySystem{tpl: tpl, model: model}
	must := func(v any) string {
		t.Helper()
		str, err := r.resolveString(v)
		if err != nil {
			t.Fatalf("%s: %v", tpl.name, err)
		}
		return str
	}
	ofType := func(typ string) []string {
		var ids []string
		for id, res := range r.resources {
			if res["Type"] == typ {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		return ids
	}
	props := func(id string) map[string]any { p, _ := r.resources[id]["Properties"].(map[string]any); return p }
	functionByARN := map[string]string{}
	for _, id := range ofType("AWS::Lambda::Function") {
		functionByARN[must(obj{"Fn::GetAtt": []any{id, "Arn"}})] = id
	}
	fnByRef := func(v any) string {
		t.Helper()
		ref := must(v)
		if !strings.HasPrefix(ref, "arn:") {
			ref = fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", fakeRegion, fakeAccount, ref)
		}
		id, ok := functionByARN[ref]
		if !ok {
			t.Fatalf("%s: %s is not a function of the template", tpl.name, ref)
		}
		return id
	}

	// Every function: its role session and its log group.
	principals := map[string]policyPrincipal{}
	for _, id := range ofType("AWS::Lambda::Function") {
		p := props(id)
		role := must(p["Role"])
		name, _ := r.physicalName(id)
		logGroup := "/aws/lambda/" + name
		if lc, _ := p["LoggingConfig"].(map[string]any); lc != nil && lc["LogGroup"] != nil {
			logGroup = must(lc["LogGroup"])
		}
		principals[id] = roleSession(id+" role", role, name)
		s.functions = append(s.functions, policyFunction{id: id, arn: must(obj{"Fn::GetAtt": []any{id, "Arn"}}), logGroup: logGroup, principal: principals[id]})
	}
	var predictorID, monitorID, mapWidgetID, jobFeederID string
	for _, id := range ofType("AWS::Lambda::Function") {
		env, _ := props(id)["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		if vars[envvars.MapMaxRecords] != nil {
			mapWidgetID = id
		}
		// Only the feeder is told the queue's URL; it reads no secret.
		if vars[envvars.QueueURL] != nil {
			jobFeederID = id
			continue
		}
		switch {
		case vars[envvars.ClaimLease] != nil:
			predictorID = id
		case vars[envvars.HistoryTTLDays] != nil:
			monitorID = id
		default:
			continue
		}
		secret := must(vars[envvars.SecretID])
		if !strings.HasPrefix(secret, "arn:") {
			// A name: Secrets Manager authorizes on the full ARN, whose
			// six-character suffix the template cannot know.
			secret = fmt.Sprintf("arn:aws:secretsmanager:%s:%s:secret:%s%s", fakeRegion, fakeAccount, secret, secretSuffix)
		}
		if s.secret != "" && s.secret != secret {
			t.Fatalf("%s: the functions read different secrets: %s and %s", tpl.name, s.secret, secret)
		}
		s.secret = secret
		if id == predictorID {
			s.table = fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", fakeRegion, fakeAccount, must(vars[envvars.TableName]))
		}
	}
	if predictorID == "" || monitorID == "" {
		t.Fatalf("%s: predictor or monitor function not found", tpl.name)
	}
	label := func(id, name string) policyPrincipal {
		p := principals[id]
		p.label = name
		principals[id] = p
		for i := range s.functions {
			if s.functions[i].id == id {
				s.functions[i].principal = p
			}
		}
		return p
	}
	s.predictor, s.monitor = label(predictorID, "predictor"), label(monitorID, "monitor")
	if mapWidgetID == "" {
		t.Fatalf("%s: map widget function not found", tpl.name)
	}
	s.mapWidget = label(mapWidgetID, "mapwidget")
	if jobFeederID == "" {
		t.Fatalf("%s: job feeder function not found", tpl.name)
	}
	s.jobFeeder = label(jobFeederID, "jobfeeder")
	s.jobFeederFunction = must(obj{"Fn::GetAtt": []any{jobFeederID, "Arn"}})
	s.monitorFunction = must(obj{"Fn::GetAtt": []any{monitorID, "Arn"}})

	// The bucket, queue and object filters: from the notification
	// configuration (s3 mode) or from the uploads rule (eventbridge mode).
	notes := ofType("Custom::S3BucketNotifications")
	if len(notes) != 1 {
		t.Fatalf("%s: want one bucket notification configuration, found %v", tpl.name, notes)
	}
	np := props(notes[0])
	s.bucket = "arn:aws:s3:::" + must(np["BucketName"])
	s.notifications = label(fnByRef(np["ServiceToken"]), "notifications handler")
	nc, _ := np["NotificationConfiguration"].(map[string]any)
	var qcs []any
	if nc["QueueConfigurations"] != nil {
		qcs = asList(nc["QueueConfigurations"])
	}
	prefix, suffix := "", ".jpg"
	switch {
	case len(qcs) == 1 && nc["EventBridgeConfiguration"] == nil:
		qc := qcs[0].(map[string]any)
		s.queue = must(qc["QueueArn"])
		if f, _ := qc["Filter"].(map[string]any); f != nil {
			for _, rule := range asList(f["Key"].(map[string]any)["FilterRules"]) {
				rule := rule.(map[string]any)
				switch strings.ToLower(rule["Name"].(string)) {
				case "prefix":
					prefix = rule["Value"].(string)
				case "suffix":
					suffix = rule["Value"].(string)
				}
			}
		}
	case len(qcs) == 0 && nc["EventBridgeConfiguration"] != nil:
		for _, id := range ofType("AWS::Events::Rule") {
			pattern, _ := props(id)["EventPattern"].(map[string]any)
			if asJSON(pattern["source"]) != `["aws.s3"]` {
				continue
			}
			targets := asList(props(id)["Targets"])
			if s.uploadRule != "" || len(targets) != 1 {
				t.Fatalf("%s: want one uploads rule with one target, found %s", tpl.name, asJSON(props(id)))
			}
			s.uploadRule = must(obj{"Fn::GetAtt": []any{id, "Arn"}})
			target := targets[0].(map[string]any)
			s.queue = must(target["Arn"])
			if dl, _ := target["DeadLetterConfig"].(map[string]any); dl != nil {
				s.uploadRuleDLQ = must(dl["Arn"])
			}
			detail, _ := pattern["detail"].(map[string]any)
			object, _ := detail["object"].(map[string]any)
			for _, m := range asList(object["key"]) {
				m, _ := m.(map[string]any)
				switch {
				case m["prefix"] != nil:
					prefix = m["prefix"].(string)
				case m["suffix"] != nil:
					suffix = m["suffix"].(string)
				case m["wildcard"] != nil:
					prefix, suffix = splitWildcard(m["wildcard"].(string))
				}
			}
		}
		if s.uploadRule == "" {
			t.Fatalf("%s: the bucket sends its events to EventBridge but no rule picks the uploads", tpl.name)
		}
	default:
		t.Fatalf("%s: want one queue notification or EventBridge, found %s", tpl.name, asJSON(nc))
	}
	s.object = s.bucket + "/" + prefix + "2025/06/photo-0001" + suffix

	// The predictor consumes that queue.
	found := false
	for _, id := range ofType("AWS::Lambda::EventSourceMapping") {
		p := props(id)
		if fnByRef(p["FunctionName"]) == predictorID && must(p["EventSourceArn"]) == s.queue {
			found = true
		}
	}
	if !found {
		t.Fatalf("%s: no event source mapping from %s to the predictor", tpl.name, s.queue)
	}

	// The topic, its key and the alarms that notify it.
	topics := ofType("AWS::SNS::Topic")
	if len(topics) != 1 {
		t.Fatalf("%s: want one topic, found %v", tpl.name, topics)
	}
	s.topic = must(obj{"Ref": topics[0]})
	if k := props(topics[0])["KmsMasterKeyId"]; k != nil {
		s.topicKey = must(k)
		if !strings.HasPrefix(s.topicKey, "arn:") {
			s.topicKey = fmt.Sprintf("arn:aws:kms:%s:%s:key/%s", fakeRegion, fakeAccount, s.topicKey)
		}
	}
	for _, id := range ofType("AWS::CloudWatch::Alarm") {
		p := props(id)
		actions := append(asList(p["AlarmActions"]), asList(p["OKActions"])...)
		for _, a := range actions {
			if a != nil && must(a) == s.topic {
				s.alarms = append(s.alarms, must(obj{"Fn::GetAtt": []any{id, "Arn"}}))
				break
			}
		}
	}

	// The monitor's schedule, and where failed deliveries and runs go.
	for _, id := range ofType("AWS::Events::Rule") {
		for _, target := range asList(props(id)["Targets"]) {
			target, _ := target.(map[string]any)
			if target != nil && must(target["Arn"]) == s.jobFeederFunction {
				s.jobFeederRule = must(obj{"Fn::GetAtt": []any{id, "Arn"}})
				continue
			}
			if target == nil || must(target["Arn"]) != s.monitorFunction { // the counting rules have no target
				continue
			}
			s.rule = must(obj{"Fn::GetAtt": []any{id, "Arn"}})
			if dl, _ := target["DeadLetterConfig"].(map[string]any); dl != nil {
				s.failuresQueue = must(dl["Arn"])
			}
		}
	}
	if s.rule == "" || s.jobFeederRule == "" {
		t.Fatalf("%s: no rule targets the monitor, or none the job feeder", tpl.name)
	}
	for _, id := range ofType("AWS::Lambda::EventInvokeConfig") {
		p := props(id)
		if fnByRef(p["FunctionName"]) != monitorID {
			continue
		}
		if dc, _ := p["DestinationConfig"].(map[string]any); dc != nil {
			if of, _ := dc["OnFailure"].(map[string]any); of != nil {
				dest := must(of["Destination"])
				if s.failuresQueue != "" && dest != s.failuresQueue {
					t.Fatalf("%s: the schedule's DLQ %s and the monitor's failure destination %s differ; the check models one", tpl.name, s.failuresQueue, dest)
				}
				s.failuresQueue = dest
			}
		}
	}

	// The access log bucket (the upload bucket's LoggingConfiguration).
	for _, id := range ofType("AWS::S3::Bucket") {
		lc, _ := props(id)["LoggingConfiguration"].(map[string]any)
		if lc != nil && must(obj{"Fn::GetAtt": []any{id, "Arn"}}) == s.bucket {
			s.accessLogs = "arn:aws:s3:::" + must(lc["DestinationBucketName"])
		}
	}
	// The results pipe: its source, target, role and dead-letter queue.
	for _, id := range ofType("AWS::Pipes::Pipe") {
		p := props(id)
		if s.pipe != "" {
			t.Fatalf("%s: more than one pipe", tpl.name)
		}
		s.pipe = must(obj{"Fn::GetAtt": []any{id, "Arn"}})
		s.stream, s.bus = must(p["Source"]), must(p["Target"])
		if dl := dig(p, "SourceParameters", "DynamoDBStreamParameters", "DeadLetterConfig", "Arn"); dl != nil {
			s.resultEventsQueue = must(dl)
		}
		role := must(p["RoleArn"])
		name, _ := r.physicalName(id)
		s.resultsPipe = roleSession("results pipe", role, name)
	}

	// CDK's auto-delete-objects handler and the buckets it empties.
	for _, id := range ofType("Custom::S3AutoDeleteObjects") {
		p := props(id)
		s.autoDelete = label(fnByRef(p["ServiceToken"]), "auto-delete handler")
		s.autoDeleteBucket = append(s.autoDeleteBucket, "arn:aws:s3:::"+must(p["BucketName"]))
	}
	return s
}

// splitWildcard splits an uploads rule's key wildcard at its one unescaped
// asterisk into the literal prefix and suffix.
func splitWildcard(w string) (prefix, suffix string) {
	var parts [2]strings.Builder
	part := 0
	for i := 0; i < len(w); i++ {
		switch {
		case w[i] == '\\' && i+1 < len(w):
			i++
			parts[part].WriteByte(w[i])
		case w[i] == '*' && part == 0:
			part = 1
		default:
			parts[part].WriteByte(w[i])
		}
	}
	return parts[0].String(), parts[1].String()
}

// externalKeyPolicy stands for the key policy of a key the stack does not
// own: AWS's default key policy (the key's account delegates to IAM), plus,
// for a key in another account, the grant its owner must give this account.
func externalKeyPolicy(keyArn string) map[string]any {
	keyAccount := strings.Split(keyArn, ":")[4]
	statements := []any{obj{
		"Sid": "DefaultKeyPolicy", "Effect": "Allow",
		"Principal": obj{"AWS": "arn:aws:iam::" + keyAccount + ":root"},
		"Action":    "kms:*", "Resource": "*",
	}}
	if keyAccount != fakeAccount {
		statements = append(statements, obj{
			"Sid": "OwnerGrantsThePipelineAccount", "Effect": "Allow",
			"Principal": obj{"AWS": "arn:aws:iam::" + fakeAccount + ":root"},
			"Action":    "kms:Decrypt", "Resource": "*",
		})
	}
	return obj{"Version": "2012-10-17", "Statement": statements}
}

// policyTarget is one resource an access is made on, with the request
// context that goes with it there (beyond the common keys).
type policyTarget struct {
	arn string
	ctx map[string]any
	// resourcePolicy overrides the template's (a key the stack does not own).
	resourcePolicy map[string]any
}

// policyAccess is one row of the required accesses. want is "Allowed"
// unless the row is a confused-deputy check ("Denied": anything else).
type policyAccess struct {
	from    string // the code that makes the call
	who     func(s *policySystem) []policyPrincipal
	actions []string
	on      func(s *policySystem) []policyTarget
	want    string
}

func one(arn string) []policyTarget { return []policyTarget{{arn: arn}} }
func none() []policyTarget          { return nil }

func by(p func(s *policySystem) policyPrincipal) func(s *policySystem) []policyPrincipal {
	return func(s *policySystem) []policyPrincipal {
		if pp := p(s); pp.arn != "" {
			return []policyPrincipal{pp}
		}
		return nil
	}
}

var (
	predictor          = by(func(s *policySystem) policyPrincipal { return s.predictor })
	monitor            = by(func(s *policySystem) policyPrincipal { return s.monitor })
	mapWidget          = by(func(s *policySystem) policyPrincipal { return s.mapWidget })
	jobFeederPrincipal = by(func(s *policySystem) policyPrincipal { return s.jobFeeder })
	// resultsPipe is absent (no rows) with events=false.
	resultsPipe = by(func(s *policySystem) policyPrincipal { return s.resultsPipe })
	service     = func(name string) func(*policySystem) []policyPrincipal {
		return func(*policySystem) []policyPrincipal { return []policyPrincipal{servicePrincipal(name)} }
	}
)

// fromService is the context a service sends when it acts for a resource.
func fromService(sourceArn, sourceAccount string) map[string]any {
	return map[string]any{"aws:SourceArn": sourceArn, "aws:SourceAccount": sourceAccount}
}

// viaService is the context of a request KMS receives from service on
// behalf of the caller, for a key in the key's region (S3 and Secrets
// Manager only use a key of their data's own region).
func viaService(service, keyArn string) map[string]any {
	region := strings.Split(keyArn, ":")[3]
	return map[string]any{"kms:ViaService": service + "." + region + ".amazonaws.com", "kms:CallerAccount": fakeAccount}
}

// requiredAccesses lists every AWS access the running system makes, with
// the code each comes from. Rows with want "Denied" check that a service
// acting for somebody else's resource is refused (confused deputy).
var requiredAccesses = []policyAccess{
	// --- predictor (functions/predictor/main.go wires the clients) ---
	{"pkg/predictor/objects.go headObject/getObject without VersionId (unversioned bucket: If-Match on the ETag); HeadObject authorizes as s3:GetObject",
		predictor, []string{"s3:GetObject"}, func(s *policySystem) []policyTarget { return one(s.object) }, "Allowed"},
	{"pkg/predictor/objects.go headObject/getObject with the event's VersionId",
		predictor, []string{"s3:GetObjectVersion"}, func(s *policySystem) []policyTarget { return one(s.object) }, "Allowed"},
	{"pkg/predictor: S3 answers 404 (not 403) for a deleted object only with s3:ListBucket (functions.go)",
		predictor, []string{"s3:ListBucket"}, func(s *policySystem) []policyTarget { return one(s.bucket) }, "Allowed"},
	{"S3 decrypts an SSE-KMS object of the existing bucket with the reader's kms:Decrypt (existingBucketKmsKeyArn)",
		predictor, []string{"kms:Decrypt"}, func(s *policySystem) []policyTarget {
			key := s.tpl.cfg.ExistingBucketKmsKeyArn
			if key == "" {
				return none()
			}
			ctx := viaService("s3", key)
			ctx["kms:EncryptionContext:aws:s3:arn"] = s.object
			return []policyTarget{{arn: key, ctx: ctx, resourcePolicy: externalKeyPolicy(key)}}
		}, "Allowed"},
	{"the grant on an existing data key is only through its service: a direct kms:Decrypt (no kms:ViaService) is refused",
		func(s *policySystem) []policyPrincipal { return []policyPrincipal{s.predictor, s.monitor} },
		[]string{"kms:Decrypt"}, func(s *policySystem) []policyTarget {
			var out []policyTarget
			for _, key := range []string{s.tpl.cfg.ExistingBucketKmsKeyArn, s.tpl.cfg.ExistingSecretKmsKeyArn} {
				if key != "" {
					out = append(out, policyTarget{arn: key, ctx: map[string]any{"kms:CallerAccount": fakeAccount}, resourcePolicy: externalKeyPolicy(key)})
				}
			}
			return out
		}, "Denied"},
	{"pkg/ledger claim.go Claim, finish.go Fail/MarkWaiting/Reject/RejectClaimed/MarkOutcomeUnknown, budget.go ReserveCredits/ReleaseCredits (UpdateItem)",
		predictor, []string{"dynamodb:UpdateItem"}, func(s *policySystem) []policyTarget { return one(s.table) }, "Allowed"},
	{"pkg/ledger finish.go Complete (PutItem)",
		predictor, []string{"dynamodb:PutItem"}, func(s *policySystem) []policyTarget { return one(s.table) }, "Allowed"},
	{"pkg/ledger claim.go existing -> query.go Lookup (GetItem, consistent read after a failed claim)",
		predictor, []string{"dynamodb:GetItem"}, func(s *policySystem) []policyTarget { return one(s.table) }, "Allowed"},
	{"pkg/secretkey/secretsmanager.go SecretsManagerProvider via secretcache: DescribeSecret, GetSecretValue",
		func(s *policySystem) []policyPrincipal { return []policyPrincipal{s.predictor, s.monitor} },
		[]string{"secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"}, func(s *policySystem) []policyTarget { return one(s.secret) }, "Allowed"},
	{"Secrets Manager decrypts the existing secret with the caller's kms:Decrypt (existingSecretKmsKeyArn)",
		func(s *policySystem) []policyPrincipal { return []policyPrincipal{s.predictor, s.monitor} },
		[]string{"kms:Decrypt"}, func(s *policySystem) []policyTarget {
			key := s.tpl.cfg.ExistingSecretKmsKeyArn
			if key == "" {
				return none()
			}
			ctx := viaService("secretsmanager", key)
			ctx["kms:EncryptionContext:SecretARN"] = s.secret
			return []policyTarget{{arn: key, ctx: ctx, resourcePolicy: externalKeyPolicy(key)}}
		}, "Allowed"},
	{"pkg/predictor/visibility.go SQSVisibility.queueURL (GetQueueUrl) and ChangeVisibility (ChangeMessageVisibility)",
		predictor, []string{"sqs:GetQueueUrl", "sqs:ChangeMessageVisibility"}, func(s *policySystem) []policyTarget { return one(s.queue) }, "Allowed"},
	{"Lambda's SQS event source mapping polls with the predictor's role (ReceiveMessage, DeleteMessage, GetQueueAttributes, ChangeMessageVisibility)",
		predictor, []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"},
		func(s *policySystem) []policyTarget { return one(s.queue) }, "Allowed"},

	// --- monitor (functions/monitor/main.go) ---
	{"pkg/monitor/history.go History.Record (PutItem) and Since (Query on the table, no index)",
		monitor, []string{"dynamodb:PutItem", "dynamodb:Query"}, func(s *policySystem) []policyTarget { return one(s.table) }, "Allowed"},
	{"pkg/monitor/estimate.go History.consumedBetween reads the records through the by-status index (Query)",
		monitor, []string{"dynamodb:Query"}, func(s *policySystem) []policyTarget { return one(s.table + "/index/" + tableschema.StatusIndex) }, "Allowed"},
	{"Lambda sends a failed asynchronous monitor run to its on-failure destination with the monitor's role",
		monitor, []string{"sqs:SendMessage"}, func(s *policySystem) []policyTarget {
			if s.failuresQueue == "" {
				return none()
			}
			return one(s.failuresQueue)
		}, "Allowed"},

	{"pkg/monitor/jobs.go checkJobs via pkg/jobs Store.List: the jobs' index partition (Query), each job item (GetItem)",
		monitor, []string{"dynamodb:Query", "dynamodb:GetItem"}, func(s *policySystem) []policyTarget { return one(s.table) }, "Allowed"},

	// --- job feeder (functions/jobfeeder, infra/jobfeeder.go) ---
	{"pkg/jobs Feeder lists a backfill's bucket (ListObjectVersions)",
		jobFeederPrincipal, []string{"s3:ListBucketVersions"}, func(s *policySystem) []policyTarget { return one(s.bucket) }, "Allowed"},
	{"pkg/jobs Store and Feeder: job items, manifest chunks, cursor and counters, the day's spend (GetItem, PutItem, UpdateItem, Query)",
		jobFeederPrincipal, jobFeederTableActions, func(s *policySystem) []policyTarget { return one(s.table) }, "Allowed"},
	{"pkg/jobs Store.deactivate: an ended job leaves the active jobs' partition (DeleteItem)",
		jobFeederPrincipal, []string{"dynamodb:DeleteItem"}, func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.table, ctx: map[string]any{"dynamodb:LeadingKeys": []any{jobs.ActivePartition}}}}
		}, "Allowed"},
	{"least privilege: the job feeder deletes nothing else (a record, a job item)",
		jobFeederPrincipal, []string{"dynamodb:DeleteItem"}, func(s *policySystem) []policyTarget {
			return []policyTarget{
				{arn: s.table, ctx: map[string]any{"dynamodb:LeadingKeys": []any{"OBJ#uploads#photo.jpg"}}},
				{arn: s.table, ctx: map[string]any{"dynamodb:LeadingKeys": []any{jobs.JobPartitionPrefix + "j-20261202-abcdef"}}},
			}
		}, "Denied"},
	{"pkg/jobs Feeder selects a reprocess job's records through the by-status index (ledger Query)",
		jobFeederPrincipal, []string{"dynamodb:Query"}, func(s *policySystem) []policyTarget { return one(s.table + "/index/" + tableschema.StatusIndex) }, "Allowed"},
	{"pkg/jobs Feeder feeds the upload queue (SendMessageBatch is authorized as sqs:SendMessage)",
		jobFeederPrincipal, []string{"sqs:SendMessage"}, func(s *policySystem) []policyTarget { return one(s.queue) }, "Allowed"},
	{"least privilege: the job feeder lists names, it reads no object",
		jobFeederPrincipal, []string{"s3:GetObject", "s3:GetObjectVersion"}, func(s *policySystem) []policyTarget { return one(s.object) }, "Denied"},
	{"least privilege: the job feeder never reads the API key",
		jobFeederPrincipal, []string{"secretsmanager:GetSecretValue"}, func(s *policySystem) []policyTarget { return one(s.secret) }, "Denied"},
	{"least privilege: the job feeder does not scan the table",
		jobFeederPrincipal, []string{"dynamodb:Scan"}, func(s *policySystem) []policyTarget { return one(s.table) }, "Denied"},
	{"least privilege: the job feeder consumes nothing from the upload queue",
		jobFeederPrincipal, []string{"sqs:ReceiveMessage", "sqs:DeleteMessage"}, func(s *policySystem) []policyTarget { return one(s.queue) }, "Denied"},
	{"EventBridge invokes the job feeder on its schedule",
		service("events.amazonaws.com"), []string{"lambda:InvokeFunction"},
		func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.jobFeederFunction, ctx: fromService(s.jobFeederRule, fakeAccount)}}
		}, "Allowed"},
	{"confused deputy: EventBridge for another rule invokes no job feeder",
		service("events.amazonaws.com"), []string{"lambda:InvokeFunction"},
		func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.jobFeederFunction, ctx: fromService(fmt.Sprintf("arn:aws:events:%s:%s:rule/other", fakeRegion, otherAccount), otherAccount)}}
		}, "Denied"},
	{"EventBridge sends a feeder event it could not deliver to the target's dead-letter queue",
		service("events.amazonaws.com"), []string{"sqs:SendMessage"},
		func(s *policySystem) []policyTarget {
			if s.failuresQueue == "" {
				return none()
			}
			return []policyTarget{{arn: s.failuresQueue, ctx: fromService(s.jobFeederRule, fakeAccount)}}
		}, "Allowed"},

	// --- map widget (functions/mapwidget/main.go) ---
	{"pkg/geomap/widget via pkg/ledger query.go Query (the by-status index)",
		mapWidget, []string{"dynamodb:Query"}, func(s *policySystem) []policyTarget { return one(s.table + "/index/" + tableschema.StatusIndex) }, "Allowed"},
	{"least privilege: the map widget reads the index only: no item reads or writes on the table, no scan",
		mapWidget, []string{"dynamodb:Query", "dynamodb:GetItem", "dynamodb:Scan", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
		func(s *policySystem) []policyTarget { return one(s.table) }, "Denied"},
	{"least privilege: the map widget does not scan the index",
		mapWidget, []string{"dynamodb:Scan"}, func(s *policySystem) []policyTarget { return one(s.table + "/index/" + tableschema.StatusIndex) }, "Denied"},
	{"least privilege: the map widget never reads the API key",
		mapWidget, []string{"secretsmanager:GetSecretValue"}, func(s *policySystem) []policyTarget { return one(s.secret) }, "Denied"},

	// --- every function's logs (Lambda writes stdout/stderr, EMF metrics included) ---
	{"Lambda writes each function's logs to the group in its LoggingConfig, with the function's role",
		func(s *policySystem) []policyPrincipal {
			var out []policyPrincipal
			for _, f := range s.functions {
				out = append(out, f.principal)
			}
			return out
		}, []string{"logs:CreateLogStream", "logs:PutLogEvents"}, nil, "Allowed"},

	// --- deploy and delete time: CDK's custom resource handlers ---
	{"CDK's bucket notifications handler writes the bucket's notification configuration",
		by(func(s *policySystem) policyPrincipal { return s.notifications }), []string{"s3:PutBucketNotification"},
		func(s *policySystem) []policyTarget { return one(s.bucket) }, "Allowed"},
	{"CDK's bucket notifications handler reads an imported bucket's configuration first, to keep its other notifications (Managed: false)",
		by(func(s *policySystem) policyPrincipal { return s.notifications }), []string{"s3:GetBucketNotification"},
		func(s *policySystem) []policyTarget {
			if s.tpl.cfg.ExistingBucketName == "" {
				return none()
			}
			return one(s.bucket)
		}, "Allowed"},
	{"CDK's auto-delete-objects handler (removeOnDestroy): GetBucketTagging, GetBucketPolicy + PutBucketPolicy (deny new writes), ListObjectVersions",
		by(func(s *policySystem) policyPrincipal { return s.autoDelete }),
		[]string{"s3:GetBucketTagging", "s3:GetBucketPolicy", "s3:PutBucketPolicy", "s3:ListBucketVersions"},
		func(s *policySystem) []policyTarget {
			var out []policyTarget
			for _, b := range s.autoDeleteBucket {
				out = append(out, policyTarget{arn: b})
			}
			return out
		}, "Allowed"},
	{"CDK's auto-delete-objects handler: DeleteObjects on every version (and delete marker)",
		by(func(s *policySystem) policyPrincipal { return s.autoDelete }),
		[]string{"s3:DeleteObject", "s3:DeleteObjectVersion"},
		func(s *policySystem) []policyTarget {
			var out []policyTarget
			for _, b := range s.autoDeleteBucket {
				out = append(out, policyTarget{arn: b + "/any/object.jpg"})
			}
			return out
		}, "Allowed"},

	// --- service to service ---
	{"Lambda assumes each function's execution role",
		service("lambda.amazonaws.com"), []string{"sts:AssumeRole"},
		func(s *policySystem) []policyTarget {
			var out []policyTarget
			for _, f := range s.functions {
				out = append(out, policyTarget{arn: f.principal.role})
			}
			return out
		}, "Allowed"},
	{"S3 event notifications (and the test event at configuration) to the upload queue (notifications=s3)",
		service("s3.amazonaws.com"), []string{"sqs:SendMessage"},
		func(s *policySystem) []policyTarget {
			if s.uploadRule != "" {
				return none()
			}
			return []policyTarget{{arn: s.queue, ctx: fromService(s.bucket, fakeAccount)}}
		}, "Allowed"},
	{"S3 sends no event to the queue itself when EventBridge carries them (notifications=eventbridge)",
		service("s3.amazonaws.com"), []string{"sqs:SendMessage"},
		func(s *policySystem) []policyTarget {
			if s.uploadRule == "" {
				return none()
			}
			return []policyTarget{{arn: s.queue, ctx: fromService(s.bucket, fakeAccount)}}
		}, "Denied"},
	{"EventBridge's uploads rule sends the bucket's Object Created events to the upload queue (notifications=eventbridge)",
		service("events.amazonaws.com"), []string{"sqs:SendMessage"},
		func(s *policySystem) []policyTarget {
			if s.uploadRule == "" {
				return none()
			}
			return []policyTarget{{arn: s.queue, ctx: fromService(s.uploadRule, fakeAccount)}}
		}, "Allowed"},
	{"EventBridge sends an upload it could not deliver to the upload queue to the dead-letter queue",
		service("events.amazonaws.com"), []string{"sqs:SendMessage"},
		func(s *policySystem) []policyTarget {
			if s.uploadRuleDLQ == "" {
				return none()
			}
			return []policyTarget{{arn: s.uploadRuleDLQ, ctx: fromService(s.uploadRule, fakeAccount)}}
		}, "Allowed"},
	{"confused deputy: EventBridge for another rule of this account, on the upload queue",
		service("events.amazonaws.com"), []string{"sqs:SendMessage"},
		func(s *policySystem) []policyTarget {
			if s.uploadRule == "" {
				return none()
			}
			return []policyTarget{{arn: s.queue, ctx: fromService(fmt.Sprintf("arn:aws:events:%s:%s:rule/somebody-elses", fakeRegion, fakeAccount), fakeAccount)}}
		}, "Denied"},
	{"confused deputy: S3 for a bucket of that name in another account",
		service("s3.amazonaws.com"), []string{"sqs:SendMessage"},
		func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.queue, ctx: fromService(s.bucket, otherAccount)}}
		}, "Denied"},
	{"confused deputy: S3 for somebody else's bucket",
		service("s3.amazonaws.com"), []string{"sqs:SendMessage"},
		func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.queue, ctx: fromService("arn:aws:s3:::somebody-elses-bucket", otherAccount)}}
		}, "Denied"},
	{"S3 server access logging delivers the upload bucket's logs",
		service("logging.s3.amazonaws.com"), []string{"s3:PutObject"},
		func(s *policySystem) []policyTarget {
			if s.accessLogs == "" {
				return none()
			}
			return []policyTarget{{arn: s.accessLogs + "/uploads/2025-06-01-00-00-00-0123456789ABCDEF", ctx: fromService(s.bucket, fakeAccount)}}
		}, "Allowed"},
	{"CloudWatch alarm actions publish to the topic (the topic policy replaces SNS's default policy)",
		service("cloudwatch.amazonaws.com"), []string{"sns:Publish"},
		func(s *policySystem) []policyTarget {
			var out []policyTarget
			for _, a := range s.alarms {
				out = append(out, policyTarget{arn: s.topic, ctx: fromService(a, fakeAccount)})
			}
			return out
		}, "Allowed"},
	{"CloudWatch's publish to the SSE-KMS topic needs the topic key (key policy)",
		service("cloudwatch.amazonaws.com"), []string{"kms:Decrypt", "kms:GenerateDataKey"},
		func(s *policySystem) []policyTarget {
			if s.topicKey == "" {
				return none()
			}
			var out []policyTarget
			for _, a := range s.alarms {
				ctx := fromService(a, fakeAccount)
				ctx["kms:ViaService"] = "sns." + fakeRegion + ".amazonaws.com"
				out = append(out, policyTarget{arn: s.topicKey, ctx: ctx})
			}
			return out
		}, "Allowed"},
	{"confused deputy: CloudWatch for an alarm of the same name in another account",
		service("cloudwatch.amazonaws.com"), []string{"sns:Publish"},
		func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.topic, ctx: fromService(foreignAlarm(s), otherAccount)}}
		}, "Denied"},
	{"confused deputy: CloudWatch for an alarm of a sibling stack in this account whose name extends this one's (<stack>-dev)",
		service("cloudwatch.amazonaws.com"), []string{"sns:Publish"},
		func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.topic, ctx: fromService(siblingAlarm(s), fakeAccount)}}
		}, "Denied"},
	{"confused deputy: CloudWatch for an alarm of a sibling stack in this account, on the topic key",
		service("cloudwatch.amazonaws.com"), []string{"kms:GenerateDataKey"},
		func(s *policySystem) []policyTarget {
			if s.topicKey == "" {
				return none()
			}
			return []policyTarget{{arn: s.topicKey, ctx: fromService(siblingAlarm(s), fakeAccount)}}
		}, "Denied"},
	{"confused deputy: CloudWatch for an alarm of the same name in another account, on the topic key",
		service("cloudwatch.amazonaws.com"), []string{"kms:GenerateDataKey"},
		func(s *policySystem) []policyTarget {
			if s.topicKey == "" {
				return none()
			}
			return []policyTarget{{arn: s.topicKey, ctx: fromService(foreignAlarm(s), otherAccount)}}
		}, "Denied"},
	{"EventBridge invokes the monitor on its schedule",
		service("events.amazonaws.com"), []string{"lambda:InvokeFunction"},
		func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.monitorFunction, ctx: fromService(s.rule, fakeAccount)}}
		}, "Allowed"},
	{"confused deputy: EventBridge for another rule",
		service("events.amazonaws.com"), []string{"lambda:InvokeFunction"},
		func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.monitorFunction, ctx: fromService(fmt.Sprintf("arn:aws:events:%s:%s:rule/other", fakeRegion, otherAccount), otherAccount)}}
		}, "Denied"},
	{"EventBridge sends an event it could not deliver to the monitor to the target's dead-letter queue",
		service("events.amazonaws.com"), []string{"sqs:SendMessage"},
		func(s *policySystem) []policyTarget {
			if s.failuresQueue == "" {
				return none()
			}
			return []policyTarget{{arn: s.failuresQueue, ctx: fromService(s.rule, fakeAccount)}}
		}, "Allowed"},
	// --- the results pipe (infra/events.go), with events=true ---
	{"EventBridge Pipes reads the results table's stream with the pipe's role (DescribeStream, GetShardIterator, GetRecords)",
		resultsPipe, []string{"dynamodb:DescribeStream", "dynamodb:GetShardIterator", "dynamodb:GetRecords"},
		func(s *policySystem) []policyTarget { return one(s.stream) }, "Allowed"},
	{"EventBridge Pipes lists the account's streams (ListStreams has no resource type)",
		resultsPipe, []string{"dynamodb:ListStreams"}, func(s *policySystem) []policyTarget { return one("*") }, "Allowed"},
	{"EventBridge Pipes puts the result events on the bus",
		resultsPipe, []string{"events:PutEvents"}, func(s *policySystem) []policyTarget { return one(s.bus) }, "Allowed"},
	{"pkg/monitor/modelwatch.go announce: the monitor puts its Model Available events on the result events' bus",
		monitor, []string{"events:PutEvents"}, func(s *policySystem) []policyTarget {
			if s.bus == "" { // events=false: no bus, no event
				return none()
			}
			return one(s.bus)
		}, "Allowed"},
	{"least privilege: the monitor puts on no other bus",
		monitor, []string{"events:PutEvents"}, func(s *policySystem) []policyTarget {
			return one(fmt.Sprintf("arn:aws:events:%s:%s:event-bus/other", fakeRegion, fakeAccount))
		}, "Denied"},
	{"EventBridge Pipes sends a batch it could not deliver to the pipe's dead-letter queue",
		resultsPipe, []string{"sqs:SendMessage"}, func(s *policySystem) []policyTarget { return one(s.resultEventsQueue) }, "Allowed"},
	{"least privilege: the pipe's role reads no other stream",
		resultsPipe, []string{"dynamodb:GetRecords"}, func(s *policySystem) []policyTarget {
			return one(fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/other/stream/%s", fakeRegion, fakeAccount, streamLabel))
		}, "Denied"},
	{"least privilege: the pipe's role puts on no other bus",
		resultsPipe, []string{"events:PutEvents"}, func(s *policySystem) []policyTarget {
			return one(fmt.Sprintf("arn:aws:events:%s:%s:event-bus/other", fakeRegion, fakeAccount))
		}, "Denied"},
	{"least privilege: the pipe's role reads no item of the table, and not its index",
		resultsPipe, []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan"}, func(s *policySystem) []policyTarget {
			return []policyTarget{{arn: s.table}, {arn: s.table + "/index/" + tableschema.StatusIndex}}
		}, "Denied"},
	{"least privilege: the pipe's role never reads the API key",
		resultsPipe, []string{"secretsmanager:GetSecretValue"}, func(s *policySystem) []policyTarget { return one(s.secret) }, "Denied"},
	{"least privilege: the pipe's role sends to no other queue",
		resultsPipe, []string{"sqs:SendMessage"}, func(s *policySystem) []policyTarget { return one(s.queue) }, "Denied"},
	{"EventBridge Pipes assumes the pipe's role for a pipe of this account",
		service("pipes.amazonaws.com"), []string{"sts:AssumeRole"},
		func(s *policySystem) []policyTarget {
			if s.pipe == "" {
				return none()
			}
			return []policyTarget{{arn: s.resultsPipe.role, ctx: fromService(s.pipe, fakeAccount)}}
		}, "Allowed"},
	{"confused deputy: EventBridge Pipes for a pipe of another account, on the pipe's role",
		service("pipes.amazonaws.com"), []string{"sts:AssumeRole"},
		func(s *policySystem) []policyTarget {
			if s.pipe == "" {
				return none()
			}
			return []policyTarget{{arn: s.resultsPipe.role, ctx: fromService(fmt.Sprintf("arn:aws:pipes:%s:%s:pipe/somebody-elses", fakeRegion, otherAccount), otherAccount)}}
		}, "Denied"},
}

// siblingAlarm is an alarm of another stack of this account whose name
// starts with this stack's name.
func siblingAlarm(s *policySystem) string {
	return fmt.Sprintf("arn:aws:cloudwatch:%s:%s:alarm:%s", fakeRegion, fakeAccount, alarmName(s.tpl.cfg.StackName+"-dev", "CreditsLow"))
}

// foreignAlarm is an alarm named like this stack's, in another account.
func foreignAlarm(s *policySystem) string {
	return fmt.Sprintf("arn:aws:cloudwatch:%s:%s:alarm:%s", fakeRegion, otherAccount, alarmName(s.tpl.cfg.StackName, "CreditsLow"))
}

// policyRow is one evaluated request of the report.
type policyRow struct {
	config, from, who, action, resource, want string
	req                                       simRequest
}

// rows expands the table for one system. Every request is made over TLS;
// each one on a resource whose policy denies plain HTTP is repeated without
// TLS and must then be explicitly denied.
func (s *policySystem) rows(t *testing.T) []policyRow {
	t.Helper()
	var out []policyRow
	add := func(a policyAccess, who policyPrincipal, action string, target policyTarget, want string, secure bool) {
		ctx := map[string]any{"aws:SecureTransport": fmt.Sprint(secure)}
		if who.role != "" {
			ctx["aws:PrincipalArn"] = who.role
			ctx["aws:PrincipalAccount"] = fakeAccount
		} else {
			ctx["aws:PrincipalServiceName"] = who.arn
			ctx["aws:PrincipalIsAWSService"] = "true"
		}
		maps.Copy(ctx, target.ctx)
		id := fmt.Sprintf("%s#%d", s.tpl.name, len(out))
		req := s.model.request(id, who, action, target.arn, ctx)
		if target.resourcePolicy != nil {
			req.ResourcePolicy = target.resourcePolicy
			req.ResourceAccount = strings.Split(target.arn, ":")[4]
		}
		out = append(out, policyRow{config: s.tpl.name, from: a.from, who: who.label, action: action, resource: target.arn, want: want, req: req})
	}
	for _, a := range requiredAccesses {
		for _, who := range a.who(s) {
			targets := []policyTarget(nil)
			if a.on != nil {
				targets = a.on(s)
			} else {
				// The log rows: each function writes to its own group.
				for _, f := range s.functions {
					if f.principal.arn == who.arn {
						targets = append(targets, policyTarget{arn: fmt.Sprintf("arn:aws:logs:%s:%s:log-group:%s:log-stream:2025/06/01/[$LATEST]0123456789abcdef", fakeRegion, fakeAccount, f.logGroup)})
					}
				}
			}
			for _, target := range targets {
				if target.arn == "" {
					t.Fatalf("%s: %q has no resource in this template", s.tpl.name, a.from)
				}
				for _, action := range a.actions {
					add(a, who, action, target, a.want, true)
					policy := s.model.resourcePolicyFor(target.arn)
					if a.want == "Allowed" && target.resourcePolicy == nil && policy != nil && hasSecureTransportDeny(policy) {
						add(a, who, action, target, "ExplicitlyDenied", false)
					}
				}
			}
		}
	}
	return out
}

func TestPolicyRequiredAccess(t *testing.T) {
	iamSimulateScript(t) // fail early, before synthesizing, if the engine is missing
	var rows []policyRow
	perConfig := map[string]int{}
	for _, tpl := range policyTemplates(t) {
		r := newPolicySystem(t, tpl).rows(t)
		perConfig[tpl.name] = len(r)
		rows = append(rows, r...)
	}
	results := simulateRows(t, rows)

	var report strings.Builder
	w := tabwriter.NewWriter(&report, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CONFIGURATION\tPRINCIPAL\tACTION\tRESOURCE\tCONTEXT\tWANT\tRESULT")
	var failed []string
	for _, r := range rows {
		res := results[r.req.ID]
		mark := res.Result
		if !r.satisfiedBy(res) {
			mark += "  <-- FAIL"
			failed = append(failed, r.failure(res))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.config, r.who, r.action, r.resource, contextSummary(r.req.Context), r.want, mark)
	}
	w.Flush()
	t.Logf("IAM policy check, %d requests (%s) evaluated by @cloud-copilot/iam-simulate %s:\n%s",
		len(rows), countsByConfig(perConfig), iamSimulateVersion, report.String())
	for _, f := range failed {
		t.Error(f)
	}
}

// simulateRows evaluates rows in one Node process, by request id.
func simulateRows(t *testing.T, rows []policyRow) map[string]simResult {
	t.Helper()
	reqs := make([]simRequest, len(rows))
	for i, r := range rows {
		reqs[i] = r.req
	}
	return simulate(t, reqs)
}

// satisfiedBy reports whether the engine's answer is what the row wants. A
// request the engine could not evaluate (invalid policy, action or ARN)
// never satisfies a row.
func (r policyRow) satisfiedBy(res simResult) bool {
	if res.Errors != "" || res.Result == "Error" {
		return false
	}
	if r.want == "Denied" {
		return res.Result != "Allowed"
	}
	return res.Result == r.want
}

func (r policyRow) failure(res simResult) string {
	detail := fmt.Sprintf("%s: %s %s on %s (%s): got %s, want %s; identity policies %s, resource policy %s",
		r.config, r.who, r.action, r.resource, r.from, res.Result, r.want, res.Identity, res.ResourcePolicy)
	if len(res.Denials) > 0 {
		detail += ", denials " + asJSON(res.Denials)
	}
	if res.Errors != "" {
		detail += ", errors " + res.Errors
	}
	return detail
}

// TestPolicyCheckCatchesDefects breaks one grant at a time in a copy of the
// created configuration's template and requires the check to fail exactly
// the accesses that grant serves: the check is only worth its green if it
// turns red. The first mutation is the template as it was before the topic
// policy named CloudWatch.
func TestPolicyCheckCatchesDefects(t *testing.T) {
	iamSimulateScript(t)
	var created policyTemplate
	for _, tpl := range policyTemplates(t) {
		if tpl.name == "created" {
			created = tpl
		}
	}
	// statements finds the one resource of type typ whose properties
	// mention marker (templates hold several queue and IAM policies).
	statements := func(doc map[string]any, typ, policyProp, marker string) (props map[string]any, list []any) {
		var found []string
		for id, res := range doc["Resources"].(map[string]any) {
			res := res.(map[string]any)
			if p, _ := res["Properties"].(map[string]any); res["Type"] == typ && strings.Contains(asJSON(p), marker) {
				found = append(found, id)
				props = p
			}
		}
		if len(found) != 1 {
			t.Fatalf("want one %s mentioning %q in the created template, found %v", typ, marker, found)
		}
		return props, asList(props[policyProp].(map[string]any)["Statement"])
	}
	setStatements := func(props map[string]any, policyProp string, list []any) {
		props[policyProp].(map[string]any)["Statement"] = list
	}
	without := func(list []any, drop func(st map[string]any) bool) []any {
		var out []any
		for _, st := range list {
			if !drop(st.(map[string]any)) {
				out = append(out, st)
			}
		}
		return out
	}
	cases := []struct {
		name   string
		mutate func(doc map[string]any)
		// fail lists "principal action" pairs that must now fail (and be
		// the only failures).
		fail []string
	}{
		{"topic policy without the CloudWatch statement (SNS's default policy replaced)", func(doc map[string]any) {
			props, list := statements(doc, "AWS::SNS::TopicPolicy", "PolicyDocument", "sns:Publish")
			setStatements(props, "PolicyDocument", without(list, func(st map[string]any) bool { return st["Effect"] == "Allow" }))
		}, []string{"cloudwatch.amazonaws.com sns:Publish"}},
		{"key policy without the CloudWatch statement", func(doc map[string]any) {
			props, list := statements(doc, "AWS::KMS::Key", "KeyPolicy", "cloudwatch.amazonaws.com")
			setStatements(props, "KeyPolicy", without(list, func(st map[string]any) bool { return strings.Contains(asJSON(st["Principal"]), "cloudwatch") }))
		}, []string{"cloudwatch.amazonaws.com kms:Decrypt", "cloudwatch.amazonaws.com kms:GenerateDataKey"}},
		{"queue policy trusting S3 by bucket ARN only (no aws:SourceAccount)", func(doc map[string]any) {
			_, list := statements(doc, "AWS::SQS::QueuePolicy", "PolicyDocument", "s3.amazonaws.com")
			for _, st := range list {
				st := st.(map[string]any)
				if strings.Contains(asJSON(st["Principal"]), "s3.amazonaws.com") {
					delete(st["Condition"].(map[string]any), "StringEquals")
				}
			}
		}, []string{"s3.amazonaws.com sqs:SendMessage"}},
		{"predictor without s3:GetObjectVersion", func(doc map[string]any) {
			_, list := statements(doc, "AWS::IAM::Policy", "PolicyDocument", "PredictorRole")
			for _, st := range list {
				st := st.(map[string]any)
				if asJSON(st["Action"]) == `["s3:GetObject","s3:GetObjectVersion"]` {
					st["Action"] = "s3:GetObject"
				}
			}
		}, []string{"predictor s3:GetObjectVersion"}},
		{"map widget without its Query on the index", func(doc map[string]any) {
			props, list := statements(doc, "AWS::IAM::Policy", "PolicyDocument", "MapWidgetRole")
			setStatements(props, "PolicyDocument", without(list, func(st map[string]any) bool { return asJSON(st["Action"]) == `"dynamodb:Query"` }))
		}, []string{"mapwidget dynamodb:Query"}},
		{"no permission for the schedule to invoke the monitor", func(doc map[string]any) {
			all := doc["Resources"].(map[string]any)
			for id, res := range all {
				if res.(map[string]any)["Type"] == "AWS::Lambda::Permission" {
					delete(all, id)
				}
			}
		}, []string{"events.amazonaws.com lambda:InvokeFunction"}},
	}
	var rows []policyRow
	caseOf := map[string]int{}
	for i, c := range cases {
		var doc map[string]any
		if err := json.Unmarshal([]byte(asJSON(created.doc)), &doc); err != nil {
			t.Fatal(err)
		}
		c.mutate(doc)
		tpl := created
		tpl.name, tpl.doc = fmt.Sprintf("mutation%d", i), doc
		for _, r := range newPolicySystem(t, tpl).rows(t) {
			caseOf[r.req.ID] = i
			rows = append(rows, r)
		}
	}
	results := simulateRows(t, rows)
	got := make([]map[string]bool, len(cases))
	for i := range got {
		got[i] = map[string]bool{}
	}
	for _, r := range rows {
		if res := results[r.req.ID]; !r.satisfiedBy(res) {
			got[caseOf[r.req.ID]][r.who+" "+r.action] = true
			t.Logf("%s: %s", cases[caseOf[r.req.ID]].name, r.failure(res))
		}
	}
	for i, c := range cases {
		want := map[string]bool{}
		for _, f := range c.fail {
			want[f] = true
		}
		if !maps.Equal(got[i], want) {
			t.Errorf("%s: the check failed %v, want exactly %v", c.name, slices.Sorted(maps.Keys(got[i])), c.fail)
		}
	}
}

// contextSummary shows the keys that decide service-to-service and TLS rows.
func contextSummary(ctx map[string]any) string {
	var parts []string
	if v, ok := ctx["aws:SecureTransport"]; ok && v != "true" {
		parts = append(parts, "SecureTransport="+fmt.Sprint(v))
	}
	for _, k := range []string{"aws:SourceArn", "aws:SourceAccount", "kms:ViaService"} {
		if v, ok := ctx[k]; ok {
			parts = append(parts, strings.TrimPrefix(strings.TrimPrefix(k, "aws:"), "kms:")+"="+fmt.Sprint(v))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func countsByConfig(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
