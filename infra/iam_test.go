package main

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// grants maps each allowed action of a role's inline policies to the
// resources (as JSON) it is allowed on.
func (s *synthesized) grants(t *testing.T, roleID string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, policy := range s.resources("AWS::IAM::Policy") {
		props := policy["Properties"].(obj)
		if !strings.Contains(asJSON(props["Roles"]), ref(roleID)) {
			continue
		}
		for _, st := range asList(props["PolicyDocument"].(obj)["Statement"]) {
			st := st.(obj)
			if st["Effect"] != "Allow" {
				continue
			}
			for _, action := range asList(st["Action"]) {
				for _, res := range asList(st["Resource"]) {
					out[action.(string)] = append(out[action.(string)], asJSON(res))
				}
			}
		}
	}
	return out
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// roleOf returns the logical id of a function's execution role.
func roleOf(t *testing.T, fn obj) string {
	t.Helper()
	att, _ := fn["Role"].(obj)["Fn::GetAtt"].([]any)
	if len(att) != 2 {
		t.Fatalf("function role is not a role of this stack: %v", fn["Role"])
	}
	return att[0].(string)
}

// anyOf separates the resources an action may be granted on.
const anyOf = " or "

func TestFunctionRolesAreLeastPrivilege(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			cfg := s.cfg
			tableID, _ := s.onlyResource(t, "AWS::DynamoDB::Table", nil)
			queueID, _ := s.uploadQueueIDs(t)
			failures := getAtt(monitoringFailuresID(t, s), "Arn")
			_, predictor := s.onlyResource(t, "AWS::Lambda::Function", isPredictor)
			_, monitor := s.onlyResource(t, "AWS::Lambda::Function", isMonitor)
			_, feeder := s.onlyResource(t, "AWS::Lambda::Function", isJobFeeder)

			// The one secret, whether created here or imported.
			secret := ""
			if ids := slices.Collect(maps.Keys(s.resources("AWS::SecretsManager::Secret"))); len(ids) == 1 {
				secret = ref(ids[0])
			} else {
				secret = cfg.ExistingSecretName + "-??????" // Secrets Manager's suffix, unknown for a name
			}
			// Objects under the upload prefix of the one bucket.
			var objects, bucketArn string
			if cfg.ExistingBucketName == "" {
				bucketID, _ := s.onlyResource(t, "AWS::S3::Bucket", func(p obj) bool { return p["LoggingConfiguration"] != nil })
				objects = asJSON(obj{"Fn::Join": []any{"", []any{obj{"Fn::GetAtt": []any{bucketID, "Arn"}}, "/" + cfg.UploadPrefix + "*"}}})
				bucketArn = getAtt(bucketID, "Arn")
			} else {
				objects = ":s3:::" + cfg.ExistingBucketName + "/" + cfg.UploadPrefix + "*"
				bucketArn = ":s3:::" + cfg.ExistingBucketName
			}
			table := getAtt(tableID, "Arn")

			tableGrants := func(actions []string) map[string]string {
				grants := map[string]string{}
				for _, a := range actions {
					grants[a] = table
				}
				return grants
			}
			logsOf := func(fn obj) string {
				return getAtt(fn["LoggingConfig"].(obj)["LogGroup"].(obj)["Ref"].(string), "Arn")
			}
			secretGrants := map[string]string{
				"secretsmanager:GetSecretValue": secret,
				"secretsmanager:DescribeSecret": secret,
			}

			wantPredictor := map[string]string{
				"logs:CreateLogStream":        logsOf(predictor),
				"logs:PutLogEvents":           logsOf(predictor),
				"s3:GetObject":                objects,
				"s3:GetObjectVersion":         objects,
				"s3:ListBucket":               bucketArn,
				"sqs:ReceiveMessage":          getAtt(queueID, "Arn"),
				"sqs:DeleteMessage":           getAtt(queueID, "Arn"),
				"sqs:ChangeMessageVisibility": getAtt(queueID, "Arn"),
				"sqs:GetQueueAttributes":      getAtt(queueID, "Arn"),
				"sqs:GetQueueUrl":             getAtt(queueID, "Arn"),
			}
			maps.Copy(wantPredictor, tableGrants(predictorTableActions))
			maps.Copy(wantPredictor, secretGrants)
			wantMonitor := map[string]string{
				"logs:CreateLogStream": logsOf(monitor),
				"logs:PutLogEvents":    logsOf(monitor),
			}
			maps.Copy(wantMonitor, tableGrants(monitorTableActions))
			maps.Copy(wantMonitor, secretGrants)
			// The on-failure destination of its asynchronous invocations.
			for _, a := range []string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"} {
				wantMonitor[a] = failures
			}
			// Its Model Available events, on the result events' bus only.
			if cfg.Events {
				wantMonitor["events:PutEvents"] = ":event-bus/" + cmp.Or(cfg.EventBusName, "default")
			}
			// The job feeder lists the bucket (names, never objects: no KMS
			// even for an SSE-KMS bucket), keeps jobs in the table, selects
			// records through the by-status index and feeds the queue.
			wantFeeder := map[string]string{
				"logs:CreateLogStream":  logsOf(feeder),
				"logs:PutLogEvents":     logsOf(feeder),
				"s3:ListBucketVersions": bucketArn,
				// The upload queue it feeds, and its on-failure destination.
				"sqs:SendMessage":        getAtt(queueID, "Arn") + anyOf + failures,
				"sqs:GetQueueAttributes": failures,
				"sqs:GetQueueUrl":        failures,
			}
			maps.Copy(wantFeeder, tableGrants(jobFeederTableActions))
			wantFeeder["dynamodb:DeleteItem"] = table // the active jobs' partition only: TestPolicyRequiredAccess
			// Customer managed keys of existing data: decrypt only.
			if cfg.ExistingBucketKmsKeyArn != "" {
				wantPredictor["kms:Decrypt"] = `"` + cfg.ExistingBucketKmsKeyArn + `"`
			}
			if cfg.ExistingSecretKmsKeyArn != "" {
				// Either key may be listed; the statements are checked below.
				if _, ok := wantPredictor["kms:Decrypt"]; !ok {
					wantPredictor["kms:Decrypt"] = `"` + cfg.ExistingSecretKmsKeyArn + `"`
				} else {
					wantPredictor["kms:Decrypt"] = `"arn:aws:kms:`
				}
				wantMonitor["kms:Decrypt"] = `"` + cfg.ExistingSecretKmsKeyArn + `"`
			}

			for fnName, c := range map[string]struct {
				fn   obj
				want map[string]string
			}{"predictor": {predictor, wantPredictor}, "monitor": {monitor, wantMonitor}, "job feeder": {feeder, wantFeeder}} {
				roleID := roleOf(t, c.fn)
				role := s.resources("AWS::IAM::Role")[roleID]["Properties"].(obj)
				if role["ManagedPolicyArns"] != nil {
					t.Errorf("%s role has managed policies: %v", fnName, role["ManagedPolicyArns"])
				}
				got := s.grants(t, roleID)
				for action, resources := range got {
					wantResource, ok := c.want[action]
					if !ok {
						t.Errorf("%s may %s on %v, which it does not need", fnName, action, resources)
						continue
					}
					for _, r := range resources {
						// Resources are CloudFormation expressions; a wanted
						// fragment must appear, and nothing may be a bare "*".
						ok := false
						for _, w := range strings.Split(wantResource, anyOf) {
							ok = ok || strings.Contains(r, strings.TrimSuffix(strings.TrimPrefix(w, `"`), `"`))
						}
						if r == `"*"` || !ok {
							t.Errorf("%s may %s on %s, want only %s", fnName, action, r, wantResource)
						}
					}
				}
				for action := range c.want {
					if _, ok := got[action]; !ok {
						t.Errorf("%s lacks %s", fnName, action)
					}
				}
			}
		})
	}
}

func TestNoWildcardActions(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		for id, policy := range s.resources("AWS::IAM::Policy") {
			for _, st := range asList(policy["Properties"].(obj)["PolicyDocument"].(obj)["Statement"]) {
				for _, action := range asList(st.(obj)["Action"]) {
					if strings.Contains(action.(string), "*") {
						t.Errorf("%s: %s allows wildcard action %s", name, id, action)
					}
				}
			}
		}
	}
}

// TestExistingDataKeysAreDecryptableThroughTheirServiceOnly: an existing
// bucket or secret encrypted with a customer managed key needs kms:Decrypt
// on that key, limited to requests S3 or Secrets Manager make.
func TestExistingDataKeysAreDecryptableThroughTheirServiceOnly(t *testing.T) {
	s := synthApp(t).imported
	_, predictor := s.onlyResource(t, "AWS::Lambda::Function", isPredictor)
	_, monitor := s.onlyResource(t, "AWS::Lambda::Function", isMonitor)
	decrypt := func(key, via string) obj {
		return obj{
			"Effect":    "Allow",
			"Action":    "kms:Decrypt",
			"Resource":  key,
			"Condition": obj{"StringEquals": obj{"kms:ViaService": via}},
		}
	}
	// The ViaService region is the key's, which is the data's region.
	bucketKey := decrypt(testBucketKeyArn, "s3.eu-west-1.amazonaws.com")
	secretKey := decrypt(testSecretKeyArn, "secretsmanager.eu-central-1.amazonaws.com")
	for name, c := range map[string]struct {
		fn   obj
		want []obj
	}{"predictor": {predictor, []obj{bucketKey, secretKey}}, "monitor": {monitor, []obj{secretKey}}} {
		for _, st := range c.want {
			check(t, name+" "+asJSON(st["Resource"]), func() {
				s.template.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj{
					"Roles":          []any{obj{"Ref": roleOf(t, c.fn)}},
					"PolicyDocument": like(obj{"Statement": arrayWith(st)}),
				})
			})
		}
	}
	// The stacks without such keys grant no KMS use at all.
	for name, s := range map[string]*synthesized{"created": synthApp(t).created, "disposable": synthApp(t).disposable} {
		for id, policy := range s.resources("AWS::IAM::Policy") {
			if strings.Contains(asJSON(policy), "kms:") {
				t.Errorf("%s: %s grants KMS use without a configured key", name, id)
			}
		}
	}
}
