package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

// fakeLocations answers GetBucketLocation from a bucket -> constraint map.
type fakeLocations struct{ regions map[string]string }

func (f *fakeLocations) GetBucketLocation(_ context.Context, in *s3.GetBucketLocationInput, _ ...func(*s3.Options)) (*s3.GetBucketLocationOutput, error) {
	return &s3.GetBucketLocationOutput{LocationConstraint: s3types.BucketLocationConstraint(f.regions[aws.ToString(in.Bucket)])}, nil
}

// fakeRules lists the EventBridge rules targeting an ARN.
type fakeRules struct{ byTarget map[string][]string }

func (f *fakeRules) ListRuleNamesByTarget(_ context.Context, in *eventbridge.ListRuleNamesByTargetInput, _ ...func(*eventbridge.Options)) (*eventbridge.ListRuleNamesByTargetOutput, error) {
	return &eventbridge.ListRuleNamesByTargetOutput{RuleNames: f.byTarget[aws.ToString(in.TargetArn)]}, nil
}

type fakeAccount struct{ quota int32 }

func (f *fakeAccount) GetAccountSettings(context.Context, *lambda.GetAccountSettingsInput, ...func(*lambda.Options)) (*lambda.GetAccountSettingsOutput, error) {
	return &lambda.GetAccountSettingsOutput{AccountLimit: &lambdatypes.AccountLimit{ConcurrentExecutions: f.quota}}, nil
}

// predeploy runs geolocate doctor --predeploy --json with a cdk.json of
// context and the -c settings.
func (w *doctorWorld) predeploy(t *testing.T, context map[string]any, settings ...string) doctorReport {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cdk.json")
	raw, _ := json.Marshal(map[string]any{"app": "go run ./infra", "context": context})
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	useAWS(t, w.clients)
	args := []string{"doctor", "--predeploy", "--json", "--cdk-json", path}
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	r := runCLI(t, w.env, w.secrets, args...)
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("not JSON (exit %d): %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(rep.Checks) != len(predeployChecks) || rep.Stack != "Geo" {
		t.Fatalf("stack %q, %d checks: %+v", rep.Stack, len(rep.Checks), rep.Checks)
	}
	if rep.Passed != (r.code == exitOK) {
		t.Errorf("passed %v with exit %d", rep.Passed, r.code)
	}
	return rep
}

// cdk.json's context as shipped, for a stack named Geo.
func shippedContext() map[string]any {
	return map[string]any{"stackName": "Geo", "existingBucketName": "", "uploadPrefix": "", "uploadSuffix": "",
		"notifications": "", "maxConcurrency": 2.0}
}

func TestPredeployReportsWhatCloudFormationWouldFailOn(t *testing.T) {
	const shared = "shared-bucket"
	overlapping := func(w *doctorWorld) {
		// Somebody else's function hears of every new .jpg of the bucket.
		w.notifications.topics = map[string][]s3types.TopicConfiguration{shared: {{
			Id: aws.String("thumbnails"), TopicArn: aws.String("arn:aws:sns:us-east-1:000000000000:thumbnails"),
			Events: []s3types.Event{"s3:ObjectCreated:*"},
			Filter: &s3types.NotificationConfigurationFilter{Key: &s3types.S3KeyFilter{FilterRules: []s3types.FilterRule{{Name: "suffix", Value: aws.String(".jpg")}}}},
		}}}
	}
	encodedPrefix := func(w *doctorWorld) {
		w.notifications.queues = map[string][]s3types.QueueConfiguration{shared: {{
			Id: aws.String("archive"), QueueArn: aws.String("arn:aws:sqs:us-east-1:000000000000:archive"),
			Events: []s3types.Event{"s3:ObjectCreated:Put"},
			Filter: &s3types.NotificationConfigurationFilter{Key: &s3types.S3KeyFilter{FilterRules: []s3types.FilterRule{{Name: "prefix", Value: aws.String("Photos+2024/")}}}},
		}}}
	}
	tests := []struct {
		name     string
		setup    func(w *doctorWorld)
		settings []string
		failing  string // the check that fails, "" for none
		detail   string
	}{
		{name: "the stack's own bucket"},
		{name: "an existing bucket through EventBridge (its default) overlaps nothing",
			setup: overlapping, settings: []string{"existingBucketName=" + shared}},
		{name: "an existing bucket notified directly, overlapping an existing notification",
			setup: overlapping, settings: []string{"existingBucketName=" + shared, "notifications=s3", "uploadPrefix=photos/"},
			failing: "notification-overlap", detail: "topic arn:aws:sns:us-east-1:000000000000:thumbnails"},
		{name: "notified directly under a suffix no notification covers",
			setup: overlapping, settings: []string{"existingBucketName=" + shared, "notifications=s3", "uploadSuffix=.png"}},
		// S3 holds filter values URL-encoded: "Photos 2024/" is stored
		// "Photos+2024/", and that is what overlaps, not the raw spelling.
		{name: "an existing notification under the encoded prefix overlaps",
			setup: encodedPrefix, settings: []string{"existingBucketName=" + shared, "notifications=s3", "uploadPrefix=Photos 2024/"},
			failing: "notification-overlap", detail: `overlapping prefix "Photos+2024/"`},
		{name: "the stack's own notification from an earlier deploy is not an overlap",
			setup: func(w *doctorWorld) {
				w.notifications.queues = map[string][]s3types.QueueConfiguration{shared: {{
					Id: aws.String("arn:aws:cloudformation:us-east-1:000000000000:stack/Geo/1234-5678"), QueueArn: aws.String(docQueueArn),
					Events: []s3types.Event{"s3:ObjectCreated:*"},
				}}}
			}, settings: []string{"existingBucketName=" + shared, "notifications=s3"}},
		{name: "an existing bucket in another region",
			setup:    func(w *doctorWorld) { w.locations.regions[shared] = "eu-west-2" },
			settings: []string{"existingBucketName=" + shared}, failing: "bucket-region", detail: "is in eu-west-2, the stack in us-east-1"},
		{name: "more concurrency than the account leaves one function",
			setup:    func(w *doctorWorld) { w.clients.account = &fakeAccount{quota: 10} },
			settings: []string{"maxConcurrency=6"}, failing: "account-concurrency", detail: "maxConcurrency 6 is above the 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newDoctorWorld(t)
			w.locations.regions[shared] = ""
			if tt.setup != nil {
				tt.setup(w)
			}
			rep := w.predeploy(t, shippedContext(), tt.settings...)
			for _, c := range rep.Checks {
				switch {
				case c.ID == tt.failing && (c.Status != checkFail || !strings.Contains(c.Detail, tt.detail) || c.Fix == ""):
					t.Errorf("%s = %+v, want a failure saying %q, with a fix", c.ID, c, tt.detail)
				case c.ID != tt.failing && c.Status != checkPass:
					t.Errorf("%s = %+v, want pass", c.ID, c)
				}
			}
		})
	}
}

// After a deploy with notifications=eventbridge the bucket has no queue
// notification: the rule that sends the uploads to the queue passes the
// check, and its absence fails it.
func TestDoctorNotificationThroughEventBridge(t *testing.T) {
	w := newDoctorWorld(t)
	w.notifications.queues = nil
	w.notifications.eventBridge = map[string]bool{"uploads": true}
	w.rules.byTarget = map[string][]string{docQueueArn: {"Geo-UploadRule4905EF1C-ABC"}}
	rep, _ := w.doctor(t)
	rep.expect(t, "bucket-notification", checkPass, "rule Geo-UploadRule4905EF1C-ABC sends the uploads to the queue", "")

	w.rules.byTarget = nil
	rep, _ = w.doctor(t)
	rep.expect(t, "bucket-notification", checkFail, "no rule sends them to the queue", "UploadRule")
}

func TestDoctorBucketInAnotherRegion(t *testing.T) {
	w := newDoctorWorld(t)
	w.locations.regions["uploads"] = "EU"
	rep, _ := w.doctor(t)
	rep.expect(t, "bucket-region", checkFail, "is in eu-west-1, the stack in us-east-1", "deploy the stack to eu-west-1")
}

// The stack's secret has no version until the key is put in: read as empty
// (doctor then says so, with put-secret-value), while a missing secret stays
// an error.
func TestSecretWithoutAValueYetReadsEmpty(t *testing.T) {
	noVersion := &smtypes.ResourceNotFoundException{Message: aws.String("Secrets Manager can't find the specified secret value for staging label: AWSCURRENT")}
	missing := &smtypes.ResourceNotFoundException{Message: aws.String("Secrets Manager can't find the specified secret.")}
	if !noValueYet(fmt.Errorf("operation error: %w", noVersion)) || noValueYet(missing) || noValueYet(errors.New("timeout")) {
		t.Error("a secret without a version is not told from a missing one")
	}
}
