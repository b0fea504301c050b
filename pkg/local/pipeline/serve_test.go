package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

func TestServeUploadsWithoutProcessingAndPrintsTheEnvironment(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	dir := t.TempDir()
	jpeg, err := os.ReadFile(filepath.Join(sampleImagesDir, "gradient-64x48.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a b.jpg", jpeg)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Options{
			ImagesDir: dir,
			Getenv:    noServiceEnv,
			DynamoDB:  db,
			Table:     "serve-" + fmt.Sprint(time.Now().UnixNano()),
			Progress:  &out,
		})
	}()
	deadline := time.After(time.Minute)
	for !strings.Contains(out.String(), "go run ./functions/predictor") {
		select {
		case err := <-done:
			t.Fatalf("Serve returned early: %v\n%s", err, out.String())
		case <-deadline:
			t.Fatalf("no environment printed:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}

	text := out.String()
	if !strings.Contains(text, "uploaded  s3://"+DefaultBucket+"/a b.jpg") || !strings.Contains(text, "not yet processed") {
		t.Errorf("upload not reported:\n%s", text)
	}
	for _, name := range []string{"AWS_ENDPOINT_URL_S3=http://127.0.0.1:", "AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:",
		envvars.TableName + "=serve-", envvars.APIURL + "=http://127.0.0.1:", envvars.APIKey + "=geo_sim_", envvars.BucketName + "=" + DefaultBucket} {
		if !strings.Contains(text, name) {
			t.Errorf("export line lacks %s:\n%s", name, text)
		}
	}
}
