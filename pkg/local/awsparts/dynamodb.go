package awsparts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// DynamoDBOptions configure StartDynamoDB.
type DynamoDBOptions struct {
	// JarPath is DynamoDBLocal.jar; default $DYNAMODB_LOCAL_JAR, else the
	// module's node_modules copy.
	JarPath string
	// JavaPath is the java executable; default $JAVA_HOME/bin/java, else PATH.
	JavaPath string
	// StartTimeout bounds the wait for the first answer. Default 60s.
	StartTimeout time.Duration
	// TempDir is where the run's own temporary folder is made (the JVM's
	// java.io.tmpdir, removed by Stop); default os.TempDir().
	TempDir string
}

// DynamoDB is a running DynamoDB Local: in memory, one shared database for
// every credential and region (-sharedDb), on a free port of 127.0.0.1.
//
// DynamoDB Local has no option to choose its bind address, so it listens
// on all interfaces; clients are only ever pointed at 127.0.0.1.
type DynamoDB struct {
	endpoint string
	// tmpDir is the JVM's java.io.tmpdir, this run's alone: sqlite4java
	// unpacks its native library (0.9 MB) there at every start and, the
	// JVM being killed, never deletes it. Stop removes the folder.
	tmpDir   string
	cmd      *exec.Cmd
	output   *tailBuffer
	exited   chan struct{} // closed once the process has been reaped
	waitErr  error         // the process's exit status, set before exited closes
	started  time.Duration
	stopOnce sync.Once
}

// portAttempts is how often StartDynamoDB retries when another process
// grabs the free port between picking and binding it.
const portAttempts = 3

// StartDynamoDB starts DynamoDB Local and waits until it answers. The
// caller must Stop it. On Linux the JVM is also killed if the Go process
// dies (SIGKILL as parent-death signal).
func StartDynamoDB(ctx context.Context, optFns ...func(*DynamoDBOptions)) (*DynamoDB, error) {
	opts := DynamoDBOptions{StartTimeout: 60 * time.Second}
	for _, fn := range optFns {
		fn(&opts)
	}
	var err error
	if opts.JavaPath == "" {
		if opts.JavaPath, err = findJava(); err != nil {
			return nil, err
		}
	}
	if opts.JarPath == "" {
		if opts.JarPath, err = findJar(); err != nil {
			return nil, err
		}
	}
	for attempt := 1; ; attempt++ {
		d, err := startDynamoDB(ctx, opts)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == portAttempts {
			return d, err
		}
	}
}

var errPortTaken = errors.New("port taken")

func startDynamoDB(ctx context.Context, opts DynamoDBOptions) (*DynamoDB, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(opts.JarPath)
	tmpDir, err := TempDir(opts.TempDir, "dynamodb-local")
	if err != nil {
		return nil, fmt.Errorf("DynamoDB Local's temporary folder: %w", err)
	}
	cmd := exec.Command(opts.JavaPath,
		"-Djava.library.path="+filepath.Join(dir, "DynamoDBLocal_lib"),
		"-Djava.io.tmpdir="+tmpDir,
		"-jar", opts.JarPath,
		"-inMemory", "-sharedDb", "-disableTelemetry",
		"-port", strconv.Itoa(port))
	cmd.Dir = dir
	output := newTailBuffer(4 << 10)
	cmd.Stdout, cmd.Stderr = output, output
	isolate(cmd)

	begin := time.Now()
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(tmpDir)
		return nil, fmt.Errorf("start DynamoDB Local (%s): %w", opts.JavaPath, err)
	}
	d := &DynamoDB{
		endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		tmpDir:   tmpDir,
		cmd:      cmd,
		output:   output,
		exited:   make(chan struct{}),
	}
	go func() {
		d.waitErr = cmd.Wait()
		close(d.exited)
	}()
	if err := d.waitReady(ctx, opts.StartTimeout); err != nil {
		d.Stop()
		return nil, err
	}
	d.started = time.Since(begin)
	return d, nil
}

// waitReady polls ListTables until DynamoDB Local answers, the process
// exits, or timeout passes.
// A stop of the caller's ctx (a Ctrl-C while it starts) is said as such,
// never as a timeout that did not happen.
func (d *DynamoDB) waitReady(parent context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	probe := d.Client(func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		callCtx, callCancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := probe.ListTables(callCtx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		callCancel()
		if err == nil {
			return nil
		}
		select {
		case <-d.exited:
			out := d.output.String()
			if strings.Contains(out, "Address already in use") || strings.Contains(out, "BindException") {
				return fmt.Errorf("DynamoDB Local on %s: %w", d.endpoint, errPortTaken)
			}
			return fmt.Errorf("DynamoDB Local exited before answering (%v); output:\n%s", d.waitErr, out)
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("DynamoDB Local: stopped while starting: %w", parent.Err())
			}
			return fmt.Errorf("DynamoDB Local did not answer on %s within %s (last error: %v); output:\n%s",
				d.endpoint, timeout, err, d.output.String())
		case <-tick.C:
		}
	}
}

// freePort asks the kernel for a free port of 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Endpoint is the base URL, e.g. "http://127.0.0.1:40123".
func (d *DynamoDB) Endpoint() string { return d.endpoint }

// StartupTime is how long DynamoDB Local took to answer its first request.
func (d *DynamoDB) StartupTime() time.Duration { return d.started }

// Client returns a client of this DynamoDB Local (fake static credentials,
// us-east-1). optFns adjust its options.
func (d *DynamoDB) Client(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       Region,
		Credentials:  fakeCredentials(),
		BaseEndpoint: aws.String(d.endpoint),
	}, optFns...)
}

// TableOptions adjust CreateTable.
type TableOptions struct {
	// Stream turns on the table's stream, as the stack has it; the default.
	//
	// DynamoDB Local keeps every stream record of every table for the life
	// of its process, those of deleted tables included, and each write gets
	// slower with their number: measured here, 2.0 ms an UpdateItem on a
	// fresh instance, 8.1 ms after 24,000 writes to tables with a stream,
	// 1.6 ms throughout without one. A test or a measurement that writes a
	// lot and reads no stream (the soak, the bench) turns it off with
	// WithoutStream: a stream changes nothing a writer sees on AWS.
	Stream bool
}

// WithoutStream creates the table without its stream (see
// TableOptions.Stream).
func WithoutStream(o *TableOptions) { o.Stream = false }

// CreateTable creates the results table as the stack does (tableschema's
// keys, index, stream and TTL) and waits until it is active.
func (d *DynamoDB) CreateTable(ctx context.Context, name string, optFns ...func(*TableOptions)) error {
	return CreateTable(ctx, d.Client(), name, optFns...)
}

// CreateTable creates the results table with client, as the stack does,
// and waits until it is active. It works on any DynamoDB endpoint.
func CreateTable(ctx context.Context, client *dynamodb.Client, name string, optFns ...func(*TableOptions)) error {
	opts := TableOptions{Stream: true}
	for _, fn := range optFns {
		fn(&opts)
	}
	in := tableschema.CreateTableInput(name)
	if !opts.Stream {
		in.StreamSpecification = nil
	}
	if _, err := client.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, time.Minute); err != nil {
		return fmt.Errorf("wait for table %s: %w", name, err)
	}
	if _, err := client.UpdateTimeToLive(ctx, tableschema.TimeToLiveInput(name)); err != nil {
		return fmt.Errorf("enable TTL on table %s: %w", name, err)
	}
	return nil
}

// Stop kills DynamoDB Local (its whole process group), waits for it to
// exit and removes its temporary folder. It is safe to call more than once.
func (d *DynamoDB) Stop() {
	d.stopOnce.Do(func() {
		// After the JVM is gone, whichever way it went: nothing writes there.
		defer os.RemoveAll(d.tmpDir)
		select {
		case <-d.exited:
			return
		default:
		}
		_ = killGroup(d.cmd) // fails only if the group is already gone
		<-d.exited
	})
}
