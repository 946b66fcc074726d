package mcpserver

// This file infers the tools' JSON schemas from their Go types and makes
// them acceptable to every client: some reject a type list (the
// ["null", "array"] that jsonschema-go infers for a slice, since a nil slice
// marshals to null; ["null", "string"] for a pointer) and a schema that
// allows anything (an `any` field).

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor infers T's schema and tidies it.
func schemaFor[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	if err := tidySchema(s, "", reflect.TypeFor[T]().String()); err != nil {
		return nil, err
	}
	return s, nil
}

// tidySchema collapses every type list with "null" to the other type, and
// refuses a schema that leaves a value's type open. The Go values behind
// such a schema are never null: slices are made non-nil, and optional fields
// are left out (omitempty) rather than null.
func tidySchema(s *jsonschema.Schema, at, typ string) error {
	if len(s.Types) > 0 {
		types := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		if len(types) != 1 {
			return fmt.Errorf("%s%s: type list %v", typ, at, s.Types)
		}
		s.Type, s.Types = types[0], nil
	}
	if s.Type == "" && s.Ref == "" && len(s.Enum) == 0 && s.Const == nil {
		return fmt.Errorf("%s%s: no type (a field of type any?)", typ, at)
	}
	if s.Items != nil {
		if err := tidySchema(s.Items, at+"[]", typ); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := tidySchema(s.Properties[name], at+"."+name, typ); err != nil {
			return err
		}
	}
	if s.AdditionalProperties != nil && !isFalse(s.AdditionalProperties) {
		if err := tidySchema(s.AdditionalProperties, at+"{}", typ); err != nil {
			return err
		}
	}
	for name, d := range s.Defs {
		if err := tidySchema(d, at+"$"+name, typ); err != nil {
			return err
		}
	}
	return nil
}

// isFalse reports whether s is the schema false (additionalProperties: false).
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.DeepEqual(*s.Not, jsonschema.Schema{})
}

// bound sets a number property's range and default.
func bound(s *jsonschema.Schema, name string, lo, hi, def int) {
	p := s.Properties[name]
	p.Minimum, p.Maximum = jsonschema.Ptr(float64(lo)), jsonschema.Ptr(float64(hi))
	if def != 0 {
		p.Default = json.RawMessage(fmt.Sprint(def))
	}
}
