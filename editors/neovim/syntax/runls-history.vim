" Syntax for runls record files (.history and .log): logback record lines
"   <date> <time> [<LEVEL>] [<episode-state>] [<conversation>] <agent> <message>
" with or without the conversation field (written before 0.18.6). Shared by
" runls-log, which sets b:runls_levels first.
if exists('b:current_syntax')
  finish
endif

" A record starts only at the start of a line; the fields follow in order.
syn match runlsTimestamp /^\d\{4}-\d\d-\d\d \d\d:\d\d:\d\d\%([,.]\d\{3}\)\?\ze\s/
      \ nextgroup=runlsLevelError,runlsLevelWarn,runlsLevelInfo,runlsLevelDebug,runlsState skipwhite
syn match runlsLevelError /ERROR\ze\s/ contained nextgroup=runlsState skipwhite
syn match runlsLevelWarn  /WARN\ze\s/  contained nextgroup=runlsState skipwhite
syn match runlsLevelInfo  /INFO\ze\s/  contained nextgroup=runlsState skipwhite
syn match runlsLevelDebug /\%(DEBUG\|TRACE\)\ze\s/ contained nextgroup=runlsState skipwhite
syn match runlsState /\[[^\]]*\]/ contained nextgroup=runlsConversationNone,runlsConversation,runlsAgent skipwhite
syn match runlsConversationNone /\[-\]/ contained nextgroup=runlsAgent skipwhite
syn match runlsConversation /\[[^\]]*\]/ contained nextgroup=runlsAgent skipwhite
syn match runlsAgent /[^[:space:]\[]\S*/ contained nextgroup=runlsReading skipwhite
syn match runlsReading /\%(said\|was told\):/ contained

" Unindented continuation lines logback appends: Java stack traces.
syn match runlsTrace /^\s*at \S\+(.*)$/
syn match runlsTrace /^\s*\.\.\. \d\+ more$/
syn match runlsCause /^\%(Caused by\|Suppressed\):/

hi def link runlsTimestamp        Comment
hi def link runlsLevelError       DiagnosticError
hi def link runlsLevelWarn        DiagnosticWarn
hi def link runlsLevelInfo        DiagnosticInfo
hi def link runlsLevelDebug       DiagnosticHint
hi def link runlsState            Type
hi def link runlsConversation     Special
hi def link runlsConversationNone Comment
hi def link runlsAgent            Identifier
hi def link runlsReading          Keyword
hi def link runlsTrace            Comment
hi def link runlsCause            WarningMsg

let b:current_syntax = 'runls-history'
