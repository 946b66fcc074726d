" Syntax for runls .log record files: the history syntax, whose timestamp is
" followed by an optional level (TRACE DEBUG INFO WARN ERROR).
if exists('b:current_syntax')
  finish
endif
runtime! syntax/runls-history.vim
let b:current_syntax = 'runls-log'
