package bench

import "math"

// Prices are AWS list prices in US dollars. They change: PricesDate says
// when these were taken, and the report tells readers to check the AWS
// pricing pages.
type Prices struct {
	Region string
	Date   string // when the figures were taken

	LambdaGBSecondARM  float64 // per GB-second, arm64, first pricing tier
	LambdaRequest      float64 // per invocation
	DynamoDBWriteUnit  float64 // on-demand, per write request unit
	DynamoDBReadUnit   float64 // on-demand, per read request unit
	S3GetRequest       float64 // per GET or HEAD (S3 Standard)
	SQSRequest         float64 // per standard-queue request (64 KB chunk)
	SecretsManagerCall float64 // per API call
	LogsIngestionGB    float64 // CloudWatch Logs, standard class, per GB ingested
	// The result events (docs/events.md): the pipe's GetRecords on the
	// table's stream (free only for Lambda's own triggers), its requests
	// (counted after filtering, per 64 KB), and the custom events it puts
	// on the bus (per 64 KB).
	StreamsReadRequest float64 // per DynamoDB Streams read request unit (GetRecords)
	PipesRequest       float64 // per EventBridge Pipes request
	EventBridgeEvent   float64 // per custom event published
}

// ListPrices are us-east-1 list prices as published in 2025 (Lambda,
// DynamoDB on-demand after the November 2024 reduction, S3 Standard, SQS,
// Secrets Manager, CloudWatch Logs, DynamoDB Streams reads, EventBridge
// Pipes and custom events). Free tiers are ignored.
var ListPrices = Prices{
	Region:             "us-east-1",
	Date:               "2025 (from the AWS pricing pages as last known; check them before relying on these)",
	LambdaGBSecondARM:  0.0000133334,
	LambdaRequest:      0.20 / 1e6,
	DynamoDBWriteUnit:  0.625 / 1e6,
	DynamoDBReadUnit:   0.125 / 1e6,
	S3GetRequest:       0.0004 / 1000,
	SQSRequest:         0.40 / 1e6,
	SecretsManagerCall: 0.05 / 10000,
	LogsIngestionGB:    0.50,
	StreamsReadRequest: 0.02 / 100000,
	PipesRequest:       0.40 / 1e6,
	EventBridgeEvent:   1.00 / 1e6,
}

// PerImage is the measured (or derived) consumption of one image.
type PerImage struct {
	Credits            float64 // service credits charged
	BilledSeconds      float64 // Lambda billed duration (each invocation rounded up to 1 ms)
	MemoryMB           int     // the function's configured memory
	Invocations        float64 // Lambda invocations (batches share one)
	DynamoDBWriteUnits float64
	DynamoDBReadUnits  float64
	S3Gets             float64 // GET and HEAD requests
	SQSRequests        float64 // send (by S3), receive and delete, per image
	SecretsCalls       float64 // GetSecretValue calls after caching
	LogBytes           float64 // log and metric bytes ingested
	StreamReads        float64 // the results pipe's GetRecords on the table's stream
	ResultEvents       float64 // result events: each a pipe request and a custom event
	// The results pipe's enrichment (functions/resultevents), invoked by
	// the pipe once per batch of records: its invocations and billed time
	// per image, at its own memory size, and the log bytes Lambda writes
	// for it (its START/END/REPORT lines: the handler itself logs nothing).
	EnrichInvocations   float64
	EnrichBilledSeconds float64
	EnrichMemoryMB      int
	EnrichLogBytes      float64
}

// CostLine is one row of the cost table, for 1,000 images.
type CostLine struct {
	Item      string
	Quantity  float64 // per 1,000 images
	Unit      string
	UnitPrice float64 // USD per unit
	USD       float64 // per 1,000 images
}

// Per1000 prices 1,000 images of usage u. Credits are listed first with no
// dollar price (their price depends on the plan).
func (p Prices) Per1000(u PerImage) (lines []CostLine, awsTotal float64) {
	const n = 1000
	gbSeconds := u.BilledSeconds * float64(u.MemoryMB) / 1024
	lines = []CostLine{
		{Item: "Service credits", Quantity: n * u.Credits, Unit: "credit"},
		{Item: "Lambda compute (arm64)", Quantity: n * gbSeconds, Unit: "GB-second", UnitPrice: p.LambdaGBSecondARM},
		{Item: "Lambda requests", Quantity: n * u.Invocations, Unit: "invocation", UnitPrice: p.LambdaRequest},
		{Item: "DynamoDB writes (on-demand)", Quantity: n * u.DynamoDBWriteUnits, Unit: "WRU", UnitPrice: p.DynamoDBWriteUnit},
		{Item: "DynamoDB reads (on-demand)", Quantity: n * u.DynamoDBReadUnits, Unit: "RRU", UnitPrice: p.DynamoDBReadUnit},
		{Item: "S3 GET/HEAD", Quantity: n * u.S3Gets, Unit: "request", UnitPrice: p.S3GetRequest},
		{Item: "SQS requests", Quantity: n * u.SQSRequests, Unit: "request", UnitPrice: p.SQSRequest},
		{Item: "Secrets Manager API calls", Quantity: n * u.SecretsCalls, Unit: "call", UnitPrice: p.SecretsManagerCall},
		{Item: "CloudWatch Logs ingestion", Quantity: n * u.LogBytes / (1 << 30), Unit: "GB", UnitPrice: p.LogsIngestionGB},
		{Item: "DynamoDB Streams reads (results pipe)", Quantity: n * u.StreamReads, Unit: "read request", UnitPrice: p.StreamsReadRequest},
		{Item: "EventBridge Pipes requests", Quantity: n * u.ResultEvents, Unit: "request", UnitPrice: p.PipesRequest},
		{Item: "EventBridge custom events", Quantity: n * u.ResultEvents, Unit: "event", UnitPrice: p.EventBridgeEvent},
		{Item: "Lambda requests (results pipe enrichment)", Quantity: n * u.EnrichInvocations, Unit: "invocation", UnitPrice: p.LambdaRequest},
		{Item: "Lambda compute (results pipe enrichment, arm64)", Quantity: n * u.EnrichBilledSeconds * float64(u.EnrichMemoryMB) / 1024, Unit: "GB-second", UnitPrice: p.LambdaGBSecondARM},
		{Item: "CloudWatch Logs ingestion (results pipe enrichment)", Quantity: n * u.EnrichLogBytes / (1 << 30), Unit: "GB", UnitPrice: p.LogsIngestionGB},
	}
	for i := range lines {
		lines[i].USD = lines[i].Quantity * lines[i].UnitPrice
		awsTotal += lines[i].USD
	}
	return lines, awsTotal
}

// BilledSeconds is Lambda's billed duration of one invocation: rounded up
// to the next millisecond.
func BilledSeconds(d float64) float64 {
	// The small tolerance keeps float error (0.011*1000 = 11.000000000000002)
	// from adding a millisecond.
	return math.Ceil(d*1000-1e-6) / 1000
}
