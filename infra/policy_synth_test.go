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
)

// policyConfiguration is one deployment the policy check evaluates.
type policyConfiguration struct {
	name string
	what string
	ctx  func(t testing.TB) map[string]any
}

// Keys and a secret in the fake account and region, for the configurations
// below (the imported scenario of synth_test.go uses other accounts/regions).
const (
	policyTestSecretArn    = "arn:aws:secretsmanager:us-east-1:111122223333:secret:geo/byarn/api-key-Zx9Yw8"
	policyTestSecretKeyArn = "arn:aws:kms:us-east-1:111122223333:key/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
)

// policyConfigurations are the shared test scenarios plus the secret
// variants only the policy check needs.
var policyConfigurations = []policyConfiguration{
	{"created", "new bucket (prefix/suffix filters), new secret, alarmEmail, retained data", createdContext},
	{"imported", "existing bucket through EventBridge (prefix and suffix), SSE-KMS key, existing secret by name with KMS key, removeOnDestroy", importedContext},
	{"disposable", "new bucket and secret, removeOnDestroy (auto-delete objects)", disposableContext},
	{"secretArn", "new bucket, existing secret by ARN with a KMS key, alarmEmail", func(t testing.TB) map[string]any {
		ctx := defaultContext(t)
		ctx[settings.StackName.Key] = "GeoSecretArn"
		ctx[settings.ExistingSecretArn.Key] = policyTestSecretArn
		ctx[settings.ExistingSecretKmsKeyArn.Key] = policyTestSecretKeyArn
		ctx[settings.AlarmEmail.Key] = "ops@example.com"
		return ctx
	}},
	{"importedS3", "existing bucket notifying the queue itself (notifications=s3, prefix and suffix), new secret", func(t testing.TB) map[string]any {
		ctx := defaultContext(t)
		ctx[settings.StackName.Key] = "GeoImportedS3"
		ctx[settings.ExistingBucketName.Key] = "geo-s3-notified-bucket"
		ctx[settings.Notifications.Key] = notificationsS3
		ctx[settings.UploadPrefix.Key] = "in/"
		ctx[settings.UploadSuffix.Key] = ".jpeg"
		return ctx
	}},
	{"importedPlain", "existing bucket through EventBridge (no KMS key, prefix filter), existing secret by ARN (AWS managed key)", func(t testing.TB) map[string]any {
		ctx := defaultContext(t)
		ctx[settings.StackName.Key] = "GeoImportedPlain"
		ctx[settings.ExistingBucketName.Key] = "geo-plain-existing-bucket"
		ctx[settings.UploadPrefix.Key] = "uploads/"
		ctx[settings.ExistingSecretArn.Key] = policyTestSecretArn
		return ctx
	}},
}

// policyTemplate is a configuration's synthesized template.
type policyTemplate struct {
	policyConfiguration
	cfg Config
	doc map[string]any
}

var (
	policyTemplatesOnce sync.Once
	policyTemplatesDone []policyTemplate
)

// policyTemplates synthesizes the policy configurations once per test binary.
func policyTemplates(t *testing.T) []policyTemplate {
	t.Helper()
	policyTemplatesOnce.Do(func() { policyTemplatesDone = synthPolicyTemplates(t) })
	if len(policyTemplatesDone) != len(policyConfigurations) {
		t.Fatal("the policy configurations were not synthesized (see the first test that tried)")
	}
	return policyTemplatesDone
}

// synthPolicyTemplates synthesizes every policy configuration in one app of
// its own. It applies no cdk-nag aspect: nag findings are nag_test.go's, and
// the policies are evaluated whatever nag says of them.
func synthPolicyTemplates(t *testing.T) []policyTemplate {
	t.Helper()
	dir, err := os.MkdirTemp("", "geolocate-policy-test-")
	if err != nil {
		t.Fatal(err)
	}
	// The templates are read into memory; the cloud assembly is not needed after.
	defer os.RemoveAll(dir)
	for _, fn := range functionAssetDirs {
		d := filepath.Join(dir, "assets", fn)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "bootstrap"), []byte("policy test stand-in for "+fn), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	flags := cdkJSONContext(t)
	out := make([]policyTemplate, 0, len(policyConfigurations))
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("synthesize the policy configurations: panic: %v", r)
			}
		}()
		app := awscdk.NewApp(&awscdk.AppProps{Context: &flags, Outdir: jsii.String(filepath.Join(dir, "cdk.out"))})
		var stacks []awscdk.Stack
		for _, c := range policyConfigurations {
			cfg, err := LoadConfig(lookupIn(c.ctx(t)))
			if err != nil {
				t.Fatalf("configuration %s: %v", c.name, err)
			}
			stacks = append(stacks, NewGeolocationStack(app, cfg.StackName, &GeolocationStackProps{
				Config:    cfg,
				AssetsDir: filepath.Join(dir, "assets"),
			}))
			out = append(out, policyTemplate{policyConfiguration: c, cfg: cfg})
		}
		for i, stack := range stacks {
			raw, err := json.Marshal(assertions.Template_FromStack(stack, nil).ToJSON())
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &out[i].doc); err != nil {
				t.Fatal(err)
			}
		}
	}()
	if dump := os.Getenv("GEOLOCATE_POLICY_DUMP"); dump != "" {
		for _, p := range out {
			b, _ := json.MarshalIndent(p.doc, "", "  ")
			if err := os.WriteFile(filepath.Join(dump, fmt.Sprintf("policy-%s.json", p.name)), b, 0o644); err != nil {
				t.Logf("dump %s: %v", p.name, err)
			}
		}
	}
	return out
}
