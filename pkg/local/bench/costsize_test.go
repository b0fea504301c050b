package bench

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestItemSize follows the worked rules of the DynamoDB guide's item size
// page: names count, numbers take one byte per two significant digits plus
// one, lists and maps 3 bytes plus one per element.
func TestItemSize(t *testing.T) {
	for _, tt := range []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"string", map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "OBJ#b#k"}}, 2 + 7},
		{"number, zeros trimmed", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "-1200.50"}}, 1 + 3 + 1},
		{"bool", map[string]types.AttributeValue{"ok": &types.AttributeValueMemberBOOL{Value: true}}, 2 + 1},
		{"list of strings", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "ab"}, &types.AttributeValueMemberS{Value: "c"}}}}, 1 + 3 + (1 + 2) + (1 + 1)},
		{"map", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"lat": &types.AttributeValueMemberN{Value: "53.5"}}}}, 1 + 3 + 1 + 3 + 3},
	} {
		if got := ItemSize(tt.item); got != tt.want {
			t.Errorf("%s: %d bytes, want %d", tt.name, got, tt.want)
		}
	}
	for size, want := range map[int]int{0: 1, 1: 1, 1024: 1, 1025: 2, 1809: 2, 2048: 2, 2049: 3} {
		if got := WriteUnits(size); got != want {
			t.Errorf("WriteUnits(%d) = %d, want %d", size, got, want)
		}
	}
}
