package config

// The settings that choose one of a few modes are typed: a value outside
// its type's constants is refused by [Config.Validate], naming the
// setting and the choices.

// TextContent is how a tool result's text is written (text_content).
type TextContent string

const (
	TextFull    TextContent = "full"    // the upstream body
	TextReceipt TextContent = "receipt" // a short receipt beside structuredContent
)

// ToolMode is how operations are offered as tools (tool_mode).
type ToolMode string

const (
	ToolModeFull    ToolMode = "full"    // one tool per operation
	ToolModeCompact ToolMode = "compact" // search_operations, describe_operation, call_operation
)

// UpstreamErrors is what a failed upstream read becomes (upstream_errors).
type UpstreamErrors string

const (
	UpstreamErrorsError      UpstreamErrors = "error"       // an error result (R3)
	UpstreamErrorsEmptyArray UpstreamErrors = "empty_array" // [] where the document says so
)

// Sessions is the MCP session mode (sessions).
type Sessions string

const (
	SessionsOff    Sessions = "off"    // stateless
	SessionsMemory Sessions = "memory" // sessions in this replica
	SessionsRedis  Sessions = "redis"  // sessions shared through Redis
)

// Tasks is where jobs that outlive their call are kept (tasks).
type Tasks string

const (
	TasksAuto   Tasks = "auto"   // redis with redis_url, memory without
	TasksMemory Tasks = "memory" // in this replica
	TasksRedis  Tasks = "redis"  // shared through Redis
	TasksOff    Tasks = "off"    // no tasks, no job handles
)

// ToolNameStyle is how operationIds become tool names (tool_name_style).
type ToolNameStyle string

const (
	NameSnake ToolNameStyle = "snake" // etfs_top_holdings
	NameKebab ToolNameStyle = "kebab" // etfs-top-holdings
	NameAsIs  ToolNameStyle = "as_is" // the operationId, cleaned
)

// modeField is a pointer to a mode-typed setting's field: its text is the
// mode, checked by Validate.
type modeField interface {
	setMode(v string)
	mode() string
}

func (m *TextContent) setMode(v string)    { *m = TextContent(v) }
func (m *TextContent) mode() string        { return string(*m) }
func (m *ToolMode) setMode(v string)       { *m = ToolMode(v) }
func (m *ToolMode) mode() string           { return string(*m) }
func (m *UpstreamErrors) setMode(v string) { *m = UpstreamErrors(v) }
func (m *UpstreamErrors) mode() string     { return string(*m) }
func (m *Sessions) setMode(v string)       { *m = Sessions(v) }
func (m *Sessions) mode() string           { return string(*m) }
func (m *Tasks) setMode(v string)          { *m = Tasks(v) }
func (m *Tasks) mode() string              { return string(*m) }
func (m *ToolNameStyle) setMode(v string)  { *m = ToolNameStyle(v) }
func (m *ToolNameStyle) mode() string      { return string(*m) }
