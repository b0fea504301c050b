package awsparts_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

func TestStartDynamoDBServesAndStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	db, err := awsparts.StartDynamoDB(ctx)
	if err != nil {
		t.Fatalf("StartDynamoDB: %v", err)
	}
	t.Cleanup(db.Stop)
	t.Logf("DynamoDB Local answered after %s at %s", db.StartupTime().Round(time.Millisecond), db.Endpoint())
	if !strings.HasPrefix(db.Endpoint(), "http://127.0.0.1:") {
		t.Errorf("Endpoint() = %q, want an http://127.0.0.1 address", db.Endpoint())
	}

	if err := db.CreateTable(ctx, "results"); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	client := db.Client()
	desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("results")})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	if desc.Table.TableStatus != types.TableStatusActive {
		t.Errorf("table status = %s, want ACTIVE", desc.Table.TableStatus)
	}
	if n := len(desc.Table.GlobalSecondaryIndexes); n != 1 || aws.ToString(desc.Table.GlobalSecondaryIndexes[0].IndexName) != tableschema.StatusIndex {
		t.Errorf("indexes = %+v, want only %s", desc.Table.GlobalSecondaryIndexes, tableschema.StatusIndex)
	}
	ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("results")})
	if err != nil {
		t.Fatalf("DescribeTimeToLive: %v", err)
	}
	if got := aws.ToString(ttl.TimeToLiveDescription.AttributeName); got != tableschema.TTLAttribute {
		t.Errorf("TTL attribute = %q, want %q", got, tableschema.TTLAttribute)
	}
	if spec := desc.Table.StreamSpecification; spec == nil || !aws.ToBool(spec.StreamEnabled) ||
		spec.StreamViewType != tableschema.StreamViewType || desc.Table.LatestStreamArn == nil {
		t.Errorf("stream = %+v (arn %v), want %s as the stack has it", spec, desc.Table.LatestStreamArn, tableschema.StreamViewType)
	}

	if err := db.CreateTable(ctx, "no-stream", awsparts.WithoutStream); err != nil {
		t.Fatalf("CreateTable WithoutStream: %v", err)
	}
	desc, err = client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("no-stream")})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	if spec := desc.Table.StreamSpecification; (spec != nil && aws.ToBool(spec.StreamEnabled)) || desc.Table.LatestStreamArn != nil {
		t.Errorf("WithoutStream: stream = %+v (arn %v), want none", spec, desc.Table.LatestStreamArn)
	}
	if n := len(desc.Table.GlobalSecondaryIndexes); n != 1 {
		t.Errorf("WithoutStream: %d indexes, want the table otherwise unchanged", n)
	}

	db.Stop()
	db.Stop() // a second Stop must be harmless
	addr := strings.TrimPrefix(db.Endpoint(), "http://")
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Stop", addr)
	}
}

func TestStartDynamoDBMissingJar(t *testing.T) {
	t.Setenv(awsparts.JarEnv, t.TempDir()+"/no/DynamoDBLocal.jar")
	_, err := awsparts.StartDynamoDB(context.Background())
	if !errors.Is(err, awsparts.ErrDynamoDBLocalMissing) {
		t.Fatalf("err = %v, want ErrDynamoDBLocalMissing", err)
	}
	if !strings.Contains(err.Error(), "make deps") {
		t.Errorf("error %q does not tell how to install DynamoDB Local", err)
	}
}

func TestStartDynamoDBMissingJava(t *testing.T) {
	t.Setenv("JAVA_HOME", "")
	t.Setenv("PATH", t.TempDir())
	_, err := awsparts.StartDynamoDB(context.Background())
	if !errors.Is(err, awsparts.ErrDynamoDBLocalMissing) {
		t.Fatalf("err = %v, want ErrDynamoDBLocalMissing", err)
	}
}

func TestStartDynamoDBReportsEarlyExit(t *testing.T) {
	// A jar that is not a jar makes java exit at once; the error must say so
	// and carry java's own output.
	jar := t.TempDir() + "/DynamoDBLocal.jar"
	if err := writeFile(jar, "not a jar"); err != nil {
		t.Fatal(err)
	}
	_, err := awsparts.StartDynamoDB(context.Background(), func(o *awsparts.DynamoDBOptions) { o.JarPath = jar })
	if err == nil || !strings.Contains(err.Error(), "exited before answering") {
		t.Fatalf("err = %v, want an early-exit error", err)
	}
	if !strings.Contains(strings.ToLower(err.Error()), "jar") {
		t.Errorf("error does not include java's output: %v", err)
	}
}

// TestStartDynamoDBStoppedWhileStarting: a Ctrl-C while the JVM starts is
// said as a stop, never as the 60 s start timeout it did not reach.
func TestStartDynamoDBStoppedWhileStarting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel) // the JVM needs a second or more
	db, err := awsparts.StartDynamoDB(ctx)
	if err == nil {
		db.Stop()
		t.Skip("DynamoDB Local answered within 100 ms: nothing interrupted")
	}
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("err = %v, want a stop (context.Canceled), not a timeout", err)
	}
}

// BenchmarkPutItem and BenchmarkGetItem measure DynamoDB Local latency:
// go test ./pkg/local/awsparts -run '^$' -bench . -benchtime 200x
func BenchmarkPutItem(b *testing.B) {
	client, table := awspartstest.DynamoDB(b)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		putItem(b, ctx, client, table, fmt.Sprintf("OBJ#bench#%d", i))
	}
}

func BenchmarkGetItem(b *testing.B) {
	client, table := awspartstest.DynamoDB(b)
	ctx := context.Background()
	putItem(b, ctx, client, table, "OBJ#bench#get")
	for b.Loop() {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName:      aws.String(table),
			Key:            key("OBJ#bench#get"),
			ConsistentRead: aws.Bool(true),
		})
		if err != nil || len(out.Item) == 0 {
			b.Fatalf("GetItem: %v (item %v)", err, out.Item)
		}
	}
}

func putItem(tb testing.TB, ctx context.Context, client *dynamodb.Client, table, pk string) {
	item := key(pk)
	item["status"] = &types.AttributeValueMemberS{Value: "succeeded"}
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		tb.Fatalf("PutItem: %v", err)
	}
}

func key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tableschema.PartitionKey: &types.AttributeValueMemberS{Value: pk},
		tableschema.SortKey:      &types.AttributeValueMemberS{Value: "V#1"},
	}
}

// TestStartDynamoDBKeepsItsTemporaryFilesToItself: sqlite4java unpacks its
// native library (0.9 MB) into the JVM's temporary folder at every start
// and, the JVM being killed, never removes it; in the shared /tmp one was
// left per run. The run's own folder holds it, and Stop removes the folder.
func TestStartDynamoDBKeepsItsTemporaryFilesToItself(t *testing.T) {
	parent := t.TempDir()
	// A folder left by a run killed outright (its process is gone) is
	// removed at the next start; one of a live process is not.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(parent, fmt.Sprintf("dynamodb-local-%d-1", dead.Process.Pid))
	live := filepath.Join(parent, fmt.Sprintf("dynamodb-local-%d-2", os.Getppid()))
	for _, d := range []string{stale, live} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	db, err := awsparts.StartDynamoDB(ctx, func(o *awsparts.DynamoDBOptions) { o.TempDir = parent })
	if err != nil {
		t.Fatalf("StartDynamoDB: %v", err)
	}
	t.Cleanup(db.Stop)
	if err := db.CreateTable(ctx, "results"); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the folder of a process that is gone is still there (%v)", err)
	}
	if err := os.Remove(live); err != nil {
		t.Errorf("the folder of a live process: %v", err)
	}
	dirs, err := os.ReadDir(parent)
	if err != nil || len(dirs) != 1 || !strings.HasPrefix(dirs[0].Name(), fmt.Sprintf("dynamodb-local-%d-", os.Getpid())) {
		t.Fatalf("temporary folder %s holds %v (%v), want one dynamodb-local-<this process>-* folder", parent, dirs, err)
	}
	var native []string
	_ = filepath.WalkDir(filepath.Join(parent, dirs[0].Name()), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "sqlite4java") {
			native = append(native, d.Name())
		}
		return nil
	})
	if len(native) == 0 {
		t.Errorf("no sqlite4java library in the run's temporary folder: the JVM wrote it elsewhere")
	}
	db.Stop()
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("after Stop, %s still holds %v", parent, left)
	}
}
