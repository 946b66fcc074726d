" Syntax for runls conversation buffers (:Runls conversation): a summary line, then a
" block a record: a header `<time> · <agent> · <LEVEL> · <conversation>` and the
" record's lines indented by two spaces; `⋯ N later` between records far apart.
" Levels take the colours of the record files' syntax.
if exists('b:current_syntax')
  finish
endif

syn match runlsSummary /^runls: .*$/
syn match runlsMore /^… \%(earlier\|more\) records: .*$/
syn match runlsGap /^⋯ .* later$/
syn match runlsTimestamp /^\%(\d\{4}-\d\d-\d\d \d\d:\d\d:\d\d\%([,.]\d\{3}\)\?\|(no time)\)\ze · /
      \ nextgroup=runlsHeaderAgent
syn match runlsHeaderAgent / · [^·]\+\ze · / contained contains=runlsDot nextgroup=runlsHeaderLevel,runlsHeaderConversation
" Defined after the conversation: of two matches at one place, the later wins.
syn match runlsHeaderConversation / · .*$/ contained contains=runlsDot
syn match runlsHeaderLevel / · \%(ERROR\|WARN\|INFO\|DEBUG\|TRACE\)\ze · / contained
      \ contains=runlsDot,runlsLevelError,runlsLevelWarn,runlsLevelInfo,runlsLevelDebug nextgroup=runlsHeaderConversation
syn match runlsDot / · / contained
syn match runlsLevelError /ERROR/ contained
syn match runlsLevelWarn /WARN/ contained
syn match runlsLevelInfo /INFO/ contained
syn match runlsLevelDebug /DEBUG\|TRACE/ contained
syn match runlsTrace /^  \s*at \S\+(.*)$/
syn match runlsTrace /^  \s*\.\.\. \d\+ more$/
syn match runlsCause /^  \%(Caused by\|Suppressed\):/

hi def link runlsSummary            Title
hi def link runlsMore               Comment
hi def link runlsGap                Comment
hi def link runlsTimestamp          Comment
hi def link runlsHeaderAgent        Identifier
hi def link runlsHeaderConversation Special
hi def link runlsDot                Comment
hi def link runlsLevelError         DiagnosticError
hi def link runlsLevelWarn          DiagnosticWarn
hi def link runlsLevelInfo          DiagnosticInfo
hi def link runlsLevelDebug         DiagnosticHint
hi def link runlsTrace              Comment
hi def link runlsCause              WarningMsg

let b:current_syntax = 'runls-conversation'
