package bench

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// WriteUnitBytes is what one DynamoDB write request unit covers: "one
// write request unit represents one write for an item up to 1 KB in size"
// (DynamoDB developer guide, read/write capacity mode).
const WriteUnitBytes = 1024

// ItemSize is the size DynamoDB bills an item by, by the rules of
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html:
// "The total size of an item is the sum of the lengths of its attribute
// names and values": a string its UTF-8 bytes, a number one byte per two
// significant digits plus one, a binary its raw bytes, a Boolean or null
// one byte, a list or map 3 bytes plus one byte per element plus the
// elements.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

// WriteUnits is how many write request units a write of an item of size
// bytes consumes: one per started KB, at least one.
func WriteUnits(size int) int { return max(1, (size+WriteUnitBytes-1)/WriteUnitBytes) }

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		return sum(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return sum(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return sum(v.Value, func(b []byte) int { return len(b) })
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	}
	return 0
}

// sum adds up size over vals.
func sum[T any](vals []T, size func(T) int) int {
	n := 0
	for _, v := range vals {
		n += size(v)
	}
	return n
}

// numberSize is one byte per two significant digits, plus one: leading
// and trailing zeros, the sign, the point and an exponent are not digits.
func numberSize(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	digits := strings.Trim(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s), "0")
	return (len(digits)+1)/2 + 1
}
