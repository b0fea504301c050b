package main

import (
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"

	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// synthesized is one stack of the shared test app.
type synthesized struct {
	cfg      Config
	stack    awscdk.Stack
	template assertions.Template
	// doc is the template as plain JSON, for checks matchers cannot express.
	doc map[string]any
}

// testApp holds both test stacks. Synthesizing starts jsii and takes
// seconds, so the app is built once and shared by every test.
type testApp struct {
	created    *synthesized // new bucket and secret, retained data
	imported   *synthesized // existing bucket and secret (KMS-encrypted), removeOnDestroy
	disposable *synthesized // new bucket and secret, removeOnDestroy
}

var (
	appOnce   sync.Once
	app       *testApp
	appErr    error
	assetsDir string
)

func TestMain(m *testing.M) {
	// Run stops the DynamoDB Local the alarm scenarios share.
	code := awspartstest.Run(m)
	if assetsDir != "" {
		os.RemoveAll(assetsDir)
	}
	// No jsii.Close(): the jsii node process exits with this one when its
	// pipes close, and Close races it and prints a spurious waitid error.
	os.Exit(code)
}

// createdContext and importedContext are cdk.json's defaults with the
// overrides each scenario deploys with.
func createdContext(t testing.TB) map[string]any {
	ctx := defaultContext(t)
	ctx[settings.StackName.Key] = "GeoCreated"
	ctx[settings.AlarmEmail.Key] = "ops@example.com"
	ctx[settings.TopN.Key] = "7"
	ctx[settings.ModelID.Key] = "geo-test-model"
	ctx[settings.UploadPrefix.Key] = "incoming/"
	ctx[settings.UploadSuffix.Key] = ".jpg"
	ctx[settings.DailyCreditBudget.Key] = "500"
	ctx[settings.RecordTTLDays.Key] = "90"
	ctx[settings.CreditsPath.Key] = "data.remaining"
	ctx[settings.NoncurrentVersionDays.Key] = "45"
	ctx[settings.MaxImageBytes.Key] = "5000000"
	ctx[settings.FinishReserveSeconds.Key] = "15"
	ctx[settings.DLQMaxReceiveCount.Key] = "5"
	// Without the result events: no pipe, its role, queue, rules or alarm.
	ctx[settings.Events.Key] = "false"
	return ctx
}

func importedContext(t testing.TB) map[string]any {
	ctx := defaultContext(t)
	ctx[settings.StackName.Key] = "GeoImported"
	ctx[settings.ExistingBucketName.Key] = "geo-test-existing-bucket"
	ctx[settings.UploadPrefix.Key] = "photos/"
	ctx[settings.UploadSuffix.Key] = ".jpg"
	ctx[settings.ExistingSecretName.Key] = "geo/test/api-key"
	ctx[settings.ExistingBucketKmsKeyArn.Key] = testBucketKeyArn
	ctx[settings.ExistingSecretKmsKeyArn.Key] = testSecretKeyArn
	ctx[settings.RemoveOnDestroy.Key] = "true"
	ctx[settings.MaxConcurrency.Key] = "5"
	ctx[settings.BatchSize.Key] = "1"
	ctx[settings.MonitorScheduleMinutes.Key] = "15"
	ctx[settings.LogRetentionDays.Key] = "14"
	// The result events on an existing bus rather than the default one.
	ctx[settings.EventBusName.Key] = testEventBusName
	return ctx
}

// testEventBusName is the existing bus of the imported scenario.
const testEventBusName = "geo-test-bus"

// The customer managed keys of the imported scenario's bucket and secret.
const (
	testBucketKeyArn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	testSecretKeyArn = "arn:aws:kms:eu-central-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab"
)

// disposableContext is a development stack: everything created, and
// removed with the stack.
func disposableContext(t testing.TB) map[string]any {
	ctx := defaultContext(t)
	ctx[settings.StackName.Key] = "GeoDisposable"
	ctx[settings.RemoveOnDestroy.Key] = "true"
	return ctx
}

// synthApp returns the shared app, synthesizing it on first use with the
// AwsSolutions checks applied, as `cdk synth` does.
func synthApp(t *testing.T) *testApp {
	t.Helper()
	appOnce.Do(func() {
		// jsii reports construct errors as panics; keep them for every test.
		defer func() {
			if r := recover(); r != nil {
				appErr = fmt.Errorf("panic: %v", r)
			}
		}()
		app, appErr = buildTestApp(t)
	})
	if appErr != nil {
		t.Fatalf("synthesize: %v", appErr)
	}
	return app
}

func buildTestApp(t *testing.T) (*testApp, error) {
	var err error
	if assetsDir, err = os.MkdirTemp("", "geolocate-infra-test-"); err != nil {
		return nil, err
	}
	for _, fn := range functionAssetDirs {
		dir := filepath.Join(assetsDir, "assets", fn)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		// A stand-in binary: the template only needs the asset's hash.
		if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("test stand-in for "+fn), 0o755); err != nil {
			return nil, err
		}
	}

	// cdk.json's context carries the feature flags `cdk synth` would apply.
	flags := cdkJSONContext(t)
	cdkApp := awscdk.NewApp(&awscdk.AppProps{
		Context: &flags,
		Outdir:  jsii.String(filepath.Join(assetsDir, "cdk.out")),
	})
	awscdk.Aspects_Of(cdkApp).Add(cdknag.NewAwsSolutionsChecks(nil), nil)
	awscdk.Aspects_Of(cdkApp).Add(cdknag.NewServerlessChecks(nil), nil)

	build := func(ctx map[string]any) (*synthesized, error) {
		cfg, err := LoadConfig(lookupIn(ctx))
		if err != nil {
			return nil, err
		}
		stack := NewGeolocationStack(cdkApp, cfg.StackName, &GeolocationStackProps{
			Config:    cfg,
			AssetsDir: filepath.Join(assetsDir, "assets"),
		})
		return &synthesized{cfg: cfg, stack: stack}, nil
	}
	created, err := build(createdContext(t))
	if err != nil {
		return nil, err
	}
	imported, err := build(importedContext(t))
	if err != nil {
		return nil, err
	}
	disposable, err := build(disposableContext(t))
	if err != nil {
		return nil, err
	}
	// The first Template_FromStack synthesizes the whole app; the second
	// reuses that synthesis.
	for _, s := range []*synthesized{created, imported, disposable} {
		s.template = assertions.Template_FromStack(s.stack, nil)
		raw, err := json.Marshal(s.template.ToJSON())
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &s.doc); err != nil {
			return nil, err
		}
	}
	return &testApp{created: created, imported: imported, disposable: disposable}, nil
}

// scenarios lists both stacks for tests that hold for each.
func (a *testApp) scenarios() map[string]*synthesized {
	return map[string]*synthesized{"created": a.created, "imported": a.imported, "disposable": a.disposable}
}

// check runs one assertions-library check, turning its panic into a test
// error so the remaining checks still run.
func check(t *testing.T, what string, assert func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	assert()
}

// resources returns the template's resources of type typ by logical id.
func (s *synthesized) resources(typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	all, _ := s.doc["Resources"].(map[string]any)
	for id, r := range all {
		res := r.(map[string]any)
		if res["Type"] == typ {
			out[id] = res
		}
	}
	return out
}

// onlyResource returns the logical id and properties of the single resource
// of type typ matching keep (nil keeps all), failing unless there is exactly one.
func (s *synthesized) onlyResource(t *testing.T, typ string, keep func(props map[string]any) bool) (string, map[string]any) {
	t.Helper()
	var ids []string
	var found map[string]any
	for id, r := range s.resources(typ) {
		props, _ := r["Properties"].(map[string]any)
		if keep == nil || keep(props) {
			ids = append(ids, id)
			found = props
		}
	}
	if len(ids) != 1 {
		t.Fatalf("want exactly one %s, found %v", typ, ids)
	}
	return ids[0], found
}

// asJSON renders v compactly, for comparing CloudFormation expressions.
func asJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %v: %v", v, err))
	}
	return string(b)
}

func getAtt(id, attr string) string { return asJSON(map[string]any{"Fn::GetAtt": []any{id, attr}}) }
func ref(id string) string          { return asJSON(map[string]any{"Ref": id}) }

// uploadQueueIDs returns the logical ids of the upload queue and of its
// dead-letter queue (the target of its redrive policy; the monitoring
// failures queue has no redrive policy either).
func (s *synthesized) uploadQueueIDs(t *testing.T) (queueID, dlqID string) {
	t.Helper()
	queueID, props := s.onlyResource(t, "AWS::SQS::Queue", func(p map[string]any) bool { return p["RedrivePolicy"] != nil })
	att, _ := props["RedrivePolicy"].(map[string]any)["deadLetterTargetArn"].(map[string]any)["Fn::GetAtt"].([]any)
	if len(att) != 2 {
		t.Fatalf("redrive target is not a queue of this stack: %v", props["RedrivePolicy"])
	}
	return queueID, att[0].(string)
}
