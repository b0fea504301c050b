package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/secretkey/secretkeytest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsfault"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// Obviously fake keys. The simulator accepts firstKey; rotation replaces it
// with a generated geo_sim_ key.
const (
	firstKey = "geo_test_fake_key_1"
	secretID = "geolocate/soak-test-key"
	simOrg   = geosim.DefaultOrg
)

// rig is the predictor wired the way the stack wires it, to real local
// parts: gofakes3, DynamoDB Local, the service simulator behind HTTP, and
// the real Secrets Manager key provider over a fake Secrets Manager.
type rig struct {
	t testing.TB
	// s3, ddb and store are the test's own view of the bucket and table;
	// the handler has clients of its own that report to predictorCalls.
	s3      *s3.Client
	bucket  string
	ddb     *dynamodb.Client
	table   string
	store   *ledger.Store
	proxies *awsProxies // nil without rigOptions.awsFaults
	sim     *geosim.Server
	url     string // the service's base URL
	secret  *secretkeytest.SecretsManager
	logs    *syncbuf.Buffer // every log line: handler, client, simulator, poller
	metrics *syncbuf.Buffer // EMF output
	cfg     predictor.Config
	handler *predictor.Handler
	// predictRequests counts prediction requests that reached the service,
	// whoever answered them.
	predictRequests atomic.Int64
}

// rigOptions adjust a rig. The zero value gives the defaults.
type rigOptions struct {
	env      map[string]string // predictor environment overrides ("" deletes)
	lease    time.Duration     // claim lease; default the predictor's
	logLevel string            // default debug
	simOpts  []func(*geosim.Config)
	// service wraps the simulator, e.g. to answer some calls itself.
	service func(sim http.Handler) http.Handler
	// secretValue is the secret's first value; default firstKey.
	secretValue *string
	// ledger wraps the ledger the handler uses (crash simulation).
	ledger func(predictor.Ledger) predictor.Ledger
	client func(*geoapi.Options)
	opts   []func(*predictor.Options)
	// unversioned runs on a bucket with versioning off, as an existing
	// bucket may be; the default is versioned, as the stack's own bucket.
	unversioned bool
	// awsFaults puts awsfault proxies between the handler's AWS clients and
	// the local S3, DynamoDB and Secrets Manager (rig.faults sets them).
	awsFaults bool
}

// awsProxies are the fault-injecting proxies in front of the local AWS
// parts, when the rig has them.
type awsProxies struct {
	S3, DynamoDB, SecretsManager *awsfault.Proxy
}

// setRules sets each proxy's rules (nil for none).
func (p *awsProxies) setRules(s3, ddb, sm []awsfault.Rule) {
	p.S3.SetRules(s3...)
	p.DynamoDB.SetRules(ddb...)
	p.SecretsManager.SetRules(sm...)
}

// injected lists the faults injected so far, by service and operation.
func (p *awsProxies) injected() map[string]int {
	out := map[string]int{}
	for _, px := range []struct {
		name string
		p    *awsfault.Proxy
	}{{"S3", p.S3}, {"DynamoDB", p.DynamoDB}, {"Secrets Manager", p.SecretsManager}} {
		for k, n := range px.p.Stats().Injected {
			out[px.name+" "+k] += n
		}
	}
	return out
}

// startProxy starts an awsfault proxy closed at the test's end.
func startProxy(t testing.TB, svc awsfault.Service, backend string) *awsfault.Proxy {
	t.Helper()
	p, err := awsfault.Start(svc, backend, soakSeed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// shippedClients builds the handler's AWS clients as the function does:
// endpoints from AWS_ENDPOINT_URL_<SERVICE>, the default configuration
// loader, and predictor.NewAWSClients with the retry configuration that
// ships. Every call they make is recorded for the golden call list.
func shippedClients(t testing.TB, endpoints map[string]string) predictor.AWSClients {
	t.Helper()
	env := map[string]string{
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIDFAKEFAKEFAKE", "AWS_SECRET_ACCESS_KEY": "fake-secret",
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	}
	for k, v := range endpoints {
		env[k] = v
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	cfg, err := lambdarun.LoadAWSConfig(context.Background(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cfg.APIOptions = append(slices.Clip(cfg.APIOptions), predictorCalls.Register)
	return predictor.NewAWSClients(cfg, lambdarun.S3Options)
}

// unversionedBucket creates a bucket with versioning off (S3's default).
func unversionedBucket(t testing.TB, c *s3.Client) string {
	t.Helper()
	name := fmt.Sprintf("soak-unversioned-%d", time.Now().UnixNano())
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
	return name
}

func newRig(t testing.TB, o rigOptions) *rig {
	t.Helper()
	s3c, bucket := awspartstest.S3(t)
	if o.unversioned {
		bucket = unversionedBucket(t, s3c)
	}
	// No stream: nothing here reads one, and every test of the package
	// writes to one DynamoDB Local, whose writes slow down with every
	// stream record it keeps (awsparts.TableOptions): with a stream, the
	// fourth soak run took 5 minutes instead of 2.
	ddb, table := awspartstest.DynamoDB(t, awsparts.WithoutStream)
	r := &rig{
		t: t, s3: s3c, bucket: bucket, ddb: ddb, table: table,
		store:   ledger.New(ddb, table),
		logs:    &syncbuf.Buffer{},
		metrics: &syncbuf.Buffer{},
	}
	level := o.logLevel
	if level == "" {
		level = "debug"
	}
	logger := lambdarun.NewLogger(r.logs, level)

	simOpts := append([]func(*geosim.Config){
		func(c *geosim.Config) { c.DemoKey = firstKey; c.Logger = logger },
	}, o.simOpts...)
	r.sim = geosim.New(simOpts...)
	var service http.Handler = r.sim
	if o.service != nil {
		service = o.service(r.sim)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && req.URL.Path == geosim.PathPredict {
			r.predictRequests.Add(1)
		}
		service.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL

	value := firstKey
	if o.secretValue != nil {
		value = *o.secretValue
	}
	// The secret is served over HTTP, so the real Secrets Manager client
	// (and its retries) reads it.
	r.secret = secretkeytest.New("", value)
	secretSrv := httptest.NewServer(r.secret)
	t.Cleanup(secretSrv.Close)
	endpoints := map[string]string{
		"AWS_ENDPOINT_URL_S3":              aws.ToString(s3c.Options().BaseEndpoint),
		"AWS_ENDPOINT_URL_DYNAMODB":        aws.ToString(ddb.Options().BaseEndpoint),
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": secretSrv.URL,
	}
	if o.awsFaults {
		r.proxies = &awsProxies{
			S3:             startProxy(t, awsfault.S3, endpoints["AWS_ENDPOINT_URL_S3"]),
			DynamoDB:       startProxy(t, awsfault.DynamoDB, endpoints["AWS_ENDPOINT_URL_DYNAMODB"]),
			SecretsManager: startProxy(t, awsfault.SecretsManager, secretSrv.URL),
		}
		endpoints["AWS_ENDPOINT_URL_S3"] = r.proxies.S3.URL()
		endpoints["AWS_ENDPOINT_URL_DYNAMODB"] = r.proxies.DynamoDB.URL()
		endpoints["AWS_ENDPOINT_URL_SECRETS_MANAGER"] = r.proxies.SecretsManager.URL()
	}
	clients := shippedClients(t, endpoints)
	secrets, err := clients.SecretsManager()
	if err != nil {
		t.Fatal(err)
	}

	// The configuration comes from an environment, exactly as the stack
	// sets it, through the predictor's own parser.
	env := map[string]string{
		envvars.TableName:      table,
		envvars.SecretID:       secretID,
		envvars.APIURL:         srv.URL,
		envvars.BucketName:     bucket,
		envvars.RatePerMinute:  "30000", // the highest rate accepted (configrules.MaxRatePerMinute)
		envvars.MaxConcurrency: "4",
		envvars.PipelineName:   "soak",
		envvars.LogLevel:       level,
	}
	for k, v := range o.env {
		env[k] = v
	}
	cfg, err := predictor.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("load predictor config: %v", err)
	}
	if o.lease > 0 {
		// Below the predictor's 30 s minimum on purpose: crashed attempts
		// must expire within the test.
		cfg.ClaimLease = o.lease
	}
	r.cfg = cfg

	keys, err := secretkey.NewSecretsManager(secrets, secretID, func(so *secretkey.SecretsManagerOptions) {
		so.MinRefreshInterval = 50 * time.Millisecond
	})
	if err != nil {
		t.Fatal(err)
	}
	client, err := geoapi.New(cfg.APIURL, func(co *geoapi.Options) {
		co.Logger = logger
		co.MaxAttempts = 3
		co.AttemptTimeout = 2 * time.Second
		co.BaseBackoff, co.MaxBackoff = 2*time.Millisecond, 20*time.Millisecond
		if o.client != nil {
			o.client(co)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var store predictor.Ledger = ledger.New(clients.DynamoDB, table)
	if o.ledger != nil {
		store = o.ledger(store)
	}
	// The shipped pacer (GEO_PACING, shared by default): its schedule item
	// lives in the same table, behind the same fault proxy.
	pace, err := predictor.NewPacer(cfg, clients.DynamoDB, logger)
	if err != nil {
		t.Fatal(err)
	}
	r.handler, err = predictor.New(cfg, predictor.Deps{
		Objects: clients.S3, Ledger: store, Service: client, Keys: keys, Pacer: pace,
		Logger: logger, Metrics: r.metrics,
	}, o.opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.assertNoKeyLeaked)
	return r
}

// keys returns every key value the rig's secret has held.
func (r *rig) keys() []string { return r.secret.Values() }

// assertNoKeyLeaked greps everything the rig's test produced, every log line
// and metric and every record in the table, for every key the secret held.
func (r *rig) assertNoKeyLeaked() {
	r.t.Helper()
	items := r.scanTable()
	for _, k := range r.keys() {
		if !strings.HasPrefix(k, "geo_") || len(k) < 8 {
			continue // an invalid secret value (empty, no prefix) is no key
		}
		if strings.Contains(r.logs.String(), k) {
			r.t.Errorf("an API key appears in the logs")
		}
		if strings.Contains(r.metrics.String(), k) {
			r.t.Errorf("an API key appears in the metrics")
		}
		if strings.Contains(items, k) {
			r.t.Errorf("an API key appears in a record")
		}
	}
}

// scanTable returns every item of the table as JSON text.
func (r *rig) scanTable() string {
	r.t.Helper()
	var b strings.Builder
	p := dynamodb.NewScanPaginator(r.ddb, &dynamodb.ScanInput{TableName: aws.String(r.table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			r.t.Errorf("scan table: %v", err)
			return b.String()
		}
		for _, item := range page.Items {
			raw, err := json.Marshal(item)
			if err != nil {
				r.t.Errorf("marshal item: %v", err)
			}
			b.Write(raw)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// put stores body under key and returns the object as its notification
// describes it.
func (r *rig) put(key string, body []byte) object {
	r.t.Helper()
	obj, err := r.putObject(key, body)
	if err != nil {
		r.t.Fatal(err)
	}
	return obj
}

// putObject is put for any goroutine.
func (r *rig) putObject(key string, body []byte) (object, error) {
	out, err := r.s3.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(r.bucket), Key: aws.String(key), Body: bytes.NewReader(body),
	})
	if err != nil {
		return object{}, fmt.Errorf("put %q: %w", key, err)
	}
	return object{
		Bucket: r.bucket, Key: key, Size: int64(len(body)),
		ETag: strings.Trim(aws.ToString(out.ETag), `"`), VersionID: aws.ToString(out.VersionId),
	}, nil
}

// deleteVersion removes one object version for good.
func (r *rig) deleteVersion(obj object) {
	r.t.Helper()
	if err := r.deleteObject(obj); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) deleteObject(obj object) error {
	in := &s3.DeleteObjectInput{Bucket: aws.String(obj.Bucket), Key: aws.String(obj.Key)}
	if obj.VersionID != "" && obj.VersionID != "null" {
		in.VersionId = aws.String(obj.VersionID)
	}
	if _, err := r.s3.DeleteObject(context.Background(), in); err != nil {
		return fmt.Errorf("delete %q: %w", obj.Key, err)
	}
	return nil
}

// record is the ledger's record of obj, nil when there is none.
func (r *rig) record(obj object) *ledger.Record {
	r.t.Helper()
	rec, err := r.store.Lookup(context.Background(), obj.ref())
	if err != nil {
		r.t.Fatalf("lookup %q: %v", obj.Key, err)
	}
	return rec
}

// predictCalls returns the simulator's prediction calls.
func (r *rig) predictCalls() []geosim.Call {
	var calls []geosim.Call
	for _, c := range r.sim.Calls() {
		if c.Endpoint == geosim.PathPredict {
			calls = append(calls, c)
		}
	}
	return calls
}

// rotateKey regenerates the service key and stores the new value in the
// secret, the way an operator rotates a compromised key.
func (r *rig) rotateKey() {
	r.t.Helper()
	values := r.secret.Values()
	fresh := r.sim.RegenerateKey(values[len(values)-1])
	if fresh == "" {
		r.t.Fatal("rotate key: the simulator does not know the current key")
	}
	r.secret.Rotate(fresh)
}

// object is one uploaded object version.
type object struct {
	Bucket, Key, ETag, VersionID string
	Size                         int64
}

func (o object) ref() ledger.ObjectRef {
	return ledger.ObjectRef{Bucket: o.Bucket, Key: o.Key, VersionID: o.VersionID, ETag: o.ETag}
}
