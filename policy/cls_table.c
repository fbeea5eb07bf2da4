/*
 * The classifier's option tables: every option each read-only tool
 * accepts, taken from the tool's own --help on Debian 12 (coreutils 9.1,
 * grep 3.8, file 5.44, util-linux 2.38, procps 4.0, binutils 2.40) and,
 * for tools Debian does not install by default (rg, ag, tree, jq, xxd),
 * from their manuals. An option not listed here makes the tool unknown:
 * a newer version's option may do anything.
 *
 * Row: name, short options getopt(3)-style ("C:" takes a value), long
 * options space-separated ("name=" takes a value, "name=2" two, "name?"
 * an optional one after "="), flags. A NULL short string means the tool's
 * options are not checked (ps and lsof have three syntaxes and none of
 * their options runs a program or writes a file; expr has no options,
 * only operands that may start with "-"). Options that raise the risk are
 * in cls_options (policy/cls_tools.c).
 */

#include <stddef.h>

#include "policy/classify.h"
#include "policy/cls.h"

const struct cls_tool cls_tools[] = {
	{ "ag", "A:B:C:DG:QSUZacfg:hilm:np:rstuvwz0",
	    "ackmate after= all-text all-types before= break "
	    "case-sensitive color color-line-number= color-match= "
	    "color-path= column context= count depth= "
	    "file-search-regex= files-with-matches "
	    "files-without-matches filename filename-pattern= follow "
	    "group heading help hidden ignore= ignore-case ignore-dir= "
	    "ignore-pattern= invert-match line-numbers literal "
	    "max-count= no-break no-color no-filename no-group "
	    "no-heading no-numbers nobreak nocolor nofilename nogroup "
	    "noheading nonumbers null numbers only-matching "
	    "path-to-ignore= print-long-lines search-binary search-zip "
	    "silent skip-vcs-ignores smart-case stats unrestricted "
	    "version vimgrep word-regexp workers= zero", 0 },
	{ "apropos", "C:L:M:Vadelm:rs:vw",
	    "and config-file= debug exact help locale= long manpath= "
	    "regex section= sections= systems= usage verbose version "
	    "wildcard", 0 },
	{ "arch", "",
	    "help version", 0 },
	{ "b2sum", "bcl:twz",
	    "binary check help ignore-missing length= quiet status "
	    "strict tag text version warn zero", 0 },
	{ "base32", "diw:",
	    "decode help ignore-garbage version wrap=", 0 },
	{ "base64", "diw:",
	    "decode help ignore-garbage version wrap=", 0 },
	{ "basename", "as:z",
	    "help multiple suffix= version zero", 0 },
	{ "bzcat", "LVqsv",
	    "help license quiet small verbose version", 0 },
	{ "cat", "AETbenstuv",
	    "help number number-nonblank show-all show-ends "
	    "show-nonprinting show-tabs squeeze-blank version", 0 },
	{ "cksum", "a:cl:wz",
	    "algorithm= check debug help ignore-missing length= quiet "
	    "status strict tag untagged version warn zero", 0 },
	{ "clear", "T:Vx",
	    "", 0 },
	{ "cmp", "bi:ln:sv",
	    "bytes= help ignore-initial= print-bytes quiet silent "
	    "verbose version", 0 },
	{ "column", "E:H:JLN:O:R:T:VW:c:dehi:l:n:o:p:r:s:tx",
	    "fillrows help json keep-empty-lines output-separator= "
	    "output-width= separator= table table-columns= "
	    "table-columns-limit= table-header-repeat table-hide= "
	    "table-name= table-noextreme= table-noheadings table-order= "
	    "table-right= table-truncate= table-wrap= tree= tree-id= "
	    "tree-parent= version", 0 },
	{ "comm", "123z",
	    "check-order help nocheck-order output-delimiter= total "
	    "version zero-terminated", 0 },
	{ "cut", "Mb:c:d:f:nsz",
	    "bytes= characters= complement delimiter= fields= help "
	    "only-delimited output-delimiter= version zero-terminated", 0 },
	{ "df", "B:HPTahiklt:vx:",
	    "all block-size= exclude-type= help human-readable inodes "
	    "local no-sync output? portability print-type si sync total "
	    "type= version", 0 },
	{ "diff", "BC:D:EF:I:NS:TU:W:X:Zabcdeilnpqrstuvwx:y",
	    "GTYPE-group-format= LTYPE-line-format= brief color? "
	    "context? ed exclude= exclude-from= expand-tabs from-file= "
	    "help horizon-lines= ifdef= ignore-all-space "
	    "ignore-blank-lines ignore-case ignore-file-name-case "
	    "ignore-matching-lines= ignore-space-change "
	    "ignore-tab-expansion ignore-trailing-space initial-tab "
	    "label= left-column line-format= minimal new-file "
	    "no-dereference no-ignore-file-name-case normal paginate "
	    "palette= rcs recursive report-identical-files "
	    "show-c-function show-function-line= side-by-side "
	    "speed-large-files starting-file= strip-trailing-cr "
	    "suppress-blank-empty suppress-common-lines tabsize= text "
	    "to-file= unidirectional-new-file unified? version width=", 0 },
	{ "dir", "1ABCDFGHI:LNQRST:UXZabcdfghiklmnop:qrstuvw:x",
	    "all almost-all author block-size= classify? color? context "
	    "dereference dereference-command-line "
	    "dereference-command-line-symlink-to-dir directory dired "
	    "escape file-type format= full-time group-directories-first "
	    "help hide= hide-control-chars human-readable hyperlink? "
	    "ignore= ignore-backups indicator-style= inode kibibytes "
	    "literal no-group numeric-uid-gid quote-name quoting-style= "
	    "recursive reverse show-control-chars si size sort= "
	    "tabsize= time= time-style= version width= zero", 0 },
	{ "dirname", "z",
	    "help version zero", 0 },
	{ "du", "0B:DHLPSX:abcd:hklmst:x",
	    "all apparent-size block-size= bytes count-links "
	    "dereference dereference-args exclude= exclude-from= "
	    "files0-from= help human-readable inodes max-depth= "
	    "no-dereference null one-file-system separate-dirs si "
	    "summarize threshold= time= time-style= total version", 0 },
	{ "egrep", "A:B:C:D:EFGHILPRTUVZabcd:e:f:hilm:noqrsvwxz",
	    "after-context= basic-regexp before-context= binary "
	    "binary-files= byte-offset color? colour? context= count "
	    "dereference-recursive devices= directories= exclude= "
	    "exclude-dir= exclude-from= extended-regexp file= "
	    "files-with-matches files-without-match fixed-strings "
	    "group-separator= help ignore-case include= initial-tab "
	    "invert-match label= line-buffered line-number line-regexp "
	    "max-count= no-filename no-group-separator no-ignore-case "
	    "no-messages null null-data only-matching perl-regexp quiet "
	    "recursive regexp= silent text version with-filename "
	    "word-regexp", 0 },
	{ "expand", "it:",
	    "help initial tabs= version", CLS_T_DIGITS },
	{ "expr", NULL, NULL, 0 },
	{ "factor", "",
	    "help version", CLS_T_DIGITS },
	{ "fgrep", "A:B:C:D:EFGHILPRTUVZabcd:e:f:hilm:noqrsvwxz",
	    "after-context= basic-regexp before-context= binary "
	    "binary-files= byte-offset color? colour? context= count "
	    "dereference-recursive devices= directories= exclude= "
	    "exclude-dir= exclude-from= extended-regexp file= "
	    "files-with-matches files-without-match fixed-strings "
	    "group-separator= help ignore-case include= initial-tab "
	    "invert-match label= line-buffered line-number line-regexp "
	    "max-count= no-filename no-group-separator no-ignore-case "
	    "no-messages null null-data only-matching perl-regexp quiet "
	    "recursive regexp= silent text version with-filename "
	    "word-regexp", 0 },
	{ "file", "0CF:LNPSZbcde:f:hiklm:nprsvz",
	    "apple brief checking-printout compile debug dereference "
	    "exclude= exclude-quiet= extension files-from= help "
	    "keep-going list magic-file= mime mime-encoding mime-type "
	    "no-buffer no-dereference no-pad no-sandbox parameter "
	    "preserve-date print0 raw separator= special-files "
	    "uncompress uncompress-noreport version", 0 },
	{ "fmt", "cg:p:stuw:",
	    "crown-margin goal= help prefix= split-only "
	    "tagged-paragraph uniform-spacing version width=", 0 },
	{ "fold", "bsw:",
	    "bytes help spaces version width=", CLS_T_DIGITS },
	{ "free", "Vbc:ghklms:tvw",
	    "bytes committed count= gibi giga help human kibi kilo lohi "
	    "mebi mega pebi peta seconds= si tebi tera total version "
	    "wide", 0 },
	{ "getconf", "av:",
	    "", 0 },
	{ "grep", "A:B:C:D:EFGHILPRTUVZabcd:e:f:hilm:noqrsvwxz",
	    "after-context= basic-regexp before-context= binary "
	    "binary-files= byte-offset color? colour? context= count "
	    "dereference-recursive devices= directories= exclude= "
	    "exclude-dir= exclude-from= extended-regexp file= "
	    "files-with-matches files-without-match fixed-strings "
	    "group-separator= help ignore-case include= initial-tab "
	    "invert-match label= line-buffered line-number line-regexp "
	    "max-count= no-filename no-group-separator no-ignore-case "
	    "no-messages null null-data only-matching perl-regexp quiet "
	    "recursive regexp= silent text version with-filename "
	    "word-regexp", 0 },
	{ "groups", "",
	    "help version", 0 },
	{ "head", "c:n:qvz",
	    "bytes= help lines= quiet silent verbose version "
	    "zero-terminated", CLS_T_DIGITS },
	{ "hexdump", "CLVbcde:f:hn:os:vx",
	    "canonical color? format= format-file= help length= "
	    "no-squeezing one-byte-char one-byte-octal skip= "
	    "two-bytes-decimal two-bytes-hex two-bytes-octal version", 0 },
	{ "id", "GZagnruz",
	    "context group groups help name real user version zero", 0 },
	{ "iostat", "",
	    "help version", 0 },
	{ "join", "1:2:a:e:ij:o:t:v:z",
	    "check-order header help ignore-case nocheck-order version "
	    "zero-terminated", 0 },
	{ "jq", "CL:MRSacef:jnrs",
	    "arg=2 argjson=2 args ascii-output color-output "
	    "compact-output exit-status from-file= help indent= "
	    "join-output jsonargs monochrome-output null-input "
	    "raw-input raw-output raw-output0 rawfile=2 seq slurp "
	    "slurpfile=2 sort-keys stream stream-errors tab unbuffered "
	    "version", 0 },
	{ "last", "FRVadf:hin:p:s:t:wx",
	    "dns file= fullnames fulltimes help hostlast ip limit= "
	    "nohostname present= since= system time-format= until= "
	    "version", 0 },
	{ "locale", "Vackmv",
	    "all-locales category-name charmaps help keyword-name usage "
	    "verbose version", 0 },
	{ "logname", "",
	    "help version", 0 },
	{ "look", "Vadfht:",
	    "alphanum alternative help ignore-case terminate= version", 0 },
	{ "ls", "1ABCDFGHI:LNQRST:UXZabcdfghiklmnop:qrstuvw:x",
	    "all almost-all author block-size= classify? color? context "
	    "dereference dereference-command-line "
	    "dereference-command-line-symlink-to-dir directory dired "
	    "escape file-type format= full-time group-directories-first "
	    "help hide= hide-control-chars human-readable hyperlink? "
	    "ignore= ignore-backups indicator-style= inode kibibytes "
	    "literal no-group numeric-uid-gid quote-name quoting-style= "
	    "recursive reverse show-control-chars si size sort= "
	    "tabsize= time= time-style= version width= zero", 0 },
	{ "lsblk", "ADE:I:JMOPSTVabde:fhilmno:prstw:x:yz",
	    "all ascii bytes dedup= discard exclude= fs help include= "
	    "inverse json list merge nodeps noempty noheadings output= "
	    "output-all pairs paths perms raw scsi shell sort= sysroot= "
	    "topology tree? version width= zoned", 0 },
	{ "lscpu", "BCJVabcehps:xy",
	    "all bytes caches? extended? help hex json offline online "
	    "output-all parse? physical sysroot= version", 0 },
	{ "lsof", NULL, NULL, 0 },
	{ "md5", "",
	    "", 0 },
	{ "md5sum", "bctwz",
	    "binary check help ignore-missing quiet status strict tag "
	    "text version warn zero", 0 },
	{ "mpstat", "",
	    "help version", 0 },
	{ "nl", "b:d:f:h:i:l:n:ps:v:w:",
	    "body-numbering= footer-numbering= header-numbering= help "
	    "join-blank-lines= line-increment= no-renumber "
	    "number-format= number-separator= number-width= "
	    "section-delimiter= starting-line-number= version", 0 },
	{ "nm", "ABCDPSUVWaef:ghjlnoprst:u",
	    "debug-syms defined-only demangle? dynamic extern-only "
	    "format= help ifunc-chars= just-symbols line-numbers "
	    "no-demangle no-recurse-limit= no-sort no-weak numeric-sort "
	    "plugin= portability print-armap print-file-name print-size "
	    "quiet radix= recurse-limit reverse-sort size-sort "
	    "special-syms synthetic target= undefined-only unicode= "
	    "version with-symbol-versions", 0 },
	{ "nproc", "",
	    "all help ignore= version", 0 },
	{ "numfmt", "Md:z",
	    "debug delimiter= field= format= from= from-unit= grouping "
	    "header? help invalid= padding= round= suffix= to= to-unit= "
	    "version zero-terminated", CLS_T_DIGITS },
	{ "objdump", "CDFGHI:LM:P:RSTUW:ab:d:efghij:lm:prstvwxz",
	    "adjust-vma= all-headers architecture= archive-headers ctf? "
	    "ctf-parent= debugging debugging-tags demangle? "
	    "disassemble= disassemble-all disassemble-zeroes "
	    "disassembler-color= disassembler-options= dwarf= "
	    "dwarf-check dwarf-depth= dwarf-start= dynamic-reloc "
	    "dynamic-syms file-headers file-offsets file-start-context "
	    "full-contents help include= info inlines insn-width= "
	    "line-numbers no-addresses no-recurse-limit prefix= "
	    "prefix-addresses prefix-strip= private= private-headers "
	    "process-links recurse-limit reloc section= sframe? "
	    "show-all-symbols source source-comment? special-syms stabs "
	    "start-address= stop-address= syms target= unicode= version "
	    "visualize-jumps= wide", 0 },
	{ "od", "A:N:S:abcdfij:lost:vwx",
	    "address-radix= endian= format= help output-duplicates "
	    "read-bytes= skip-bytes= strings? traditional version "
	    "width?", 0 },
	{ "paste", "d:sz",
	    "delimiters= help serial version zero-terminated", 0 },
	{ "pgrep", "AF:G:LO:P:U:Vacd:fg:hilnor:s:t:u:vwx",
	    "cgroup= count delimiter= euid= exact full group= help "
	    "ignore-ancestors ignore-case inverse lightweight list-full "
	    "list-name logpidfile newest ns= nslist= older= oldest "
	    "parent= pgroup= pidfile= runstates= session= terminal= "
	    "uid= version", 0 },
	{ "pidof", "S:cno:qswxz",
	    "check-root help omit-pid= quiet separator= single-shot "
	    "version", 0 },
	{ "printenv", "0",
	    "help null version", 0 },
	{ "ps", NULL, NULL, 0 },
	{ "readelf", "ACDHILNPR:SVWTUXadeghilnp:rstuvwx:z",
	    "all arch-specific archive-index ctf= debug-dump? "
	    "decompress demangle? dwarf-depth= dwarf-start= dyn-syms "
	    "dynamic file-header headers help hex-dump= histogram lint "
	    "lto-syms notes program-headers relocated-dump= relocs "
	    "section-details section-groups section-headers sections "
	    "segments sframe? silent-truncation string-dump= symbols "
	    "syms unwind use-dynamic version version-info wide", 0 },
	{ "readlink", "efmnqsvz",
	    "canonicalize canonicalize-existing canonicalize-missing "
	    "help no-newline quiet silent verbose version zero", 0 },
	{ "realpath", "LPemqsz",
	    "canonicalize-existing canonicalize-missing help logical "
	    "no-symlinks physical quiet relative-base= relative-to= "
	    "strip version zero", 0 },
	{ "rev", "Vh",
	    "help version", 0 },
	{ "rg", "0A:B:C:E:FHILM:NPST:UVabcd:e:f:g:hij:lm:noqr:st:uvwxz",
	    "after-context= before-context= binary block-buffered "
	    "byte-offset case-sensitive color= colors= column context= "
	    "context-separator= count count-matches crlf debug "
	    "dfa-size-limit= encoding= engine= field-context-separator= "
	    "field-match-separator= file= files files-with-matches "
	    "files-without-match fixed-strings follow glob= "
	    "glob-case-insensitive heading help hidden hostname-bin= "
	    "hyperlink-format= iglob= ignore-case ignore-file= "
	    "ignore-file-case-insensitive include-zero invert-match "
	    "json line-buffered line-number line-regexp max-columns= "
	    "max-columns-preview max-count= max-depth= max-filesize= "
	    "mmap multiline multiline-dotall no-config no-filename "
	    "no-heading no-ignore no-ignore-dot no-ignore-exclude "
	    "no-ignore-files no-ignore-global no-ignore-messages "
	    "no-ignore-parent no-ignore-vcs no-line-number no-messages "
	    "no-mmap no-pcre2-unicode no-require-git no-unicode null "
	    "null-data one-file-system only-matching passthru "
	    "path-separator= pcre2 pcre2-version pre= pre-glob= pretty "
	    "quiet regex-size-limit= regexp= replace= search-zip "
	    "smart-case sort= sortr= stats stop-on-nonmatch text "
	    "threads= trim type= type-add= type-clear= type-list "
	    "type-not= unrestricted version vimgrep with-filename "
	    "word-regexp", 0 },
	{ "seq", "f:s:w",
	    "equal-width format= help separator= version", CLS_T_DIGITS },
	{ "sha1", "",
	    "", 0 },
	{ "sha1sum", "bctwz",
	    "binary check help ignore-missing quiet status strict tag "
	    "text version warn zero", 0 },
	{ "sha224sum", "bctwz",
	    "binary check help ignore-missing quiet status strict tag "
	    "text version warn zero", 0 },
	{ "sha256sum", "bctwz",
	    "binary check help ignore-missing quiet status strict tag "
	    "text version warn zero", 0 },
	{ "sha384sum", "bctwz",
	    "binary check help ignore-missing quiet status strict tag "
	    "text version warn zero", 0 },
	{ "sha512sum", "bctwz",
	    "binary check help ignore-missing quiet status strict tag "
	    "text version warn zero", 0 },
	{ "shuf", "ei:n:o:rz",
	    "echo head-count= help input-range= output= random-source= "
	    "repeat version zero-terminated", 0 },
	{ "size", "ABGdotx",
	    "common format= help radix= target= totals version", 0 },
	{ "sleep", "",
	    "help version", 0 },
	{ "sort", "C:MRS:T:Vbcdfghik:mno:rst:uz",
	    "batch-size= buffer-size= check= compress-program= debug "
	    "dictionary-order field-separator= files0-from= "
	    "general-numeric-sort help human-numeric-sort ignore-case "
	    "ignore-leading-blanks ignore-nonprinting key= merge "
	    "month-sort numeric-sort output= parallel= random-sort "
	    "random-source= reverse sort= stable temporary-directory= "
	    "unique version version-sort zero-terminated", 0 },
	{ "stat", "Lcft",
	    "cached= dereference file-system help printf= terse version", 0 },
	{ "strings", "T:U:Vade:fn:os:t:vw",
	    "all bytes= data encoding= help include-all-whitespace "
	    "output-separator= print-file-name radix= target= unicode= "
	    "version", 0 },
	{ "sum", "rs",
	    "help sysv version", 0 },
	{ "tac", "brs:",
	    "before help regex separator= version", 0 },
	{ "tail", "Fc:fn:qs:vz",
	    "bytes= follow? help lines= max-unchanged-stats= pid= quiet "
	    "retry silent sleep-interval= verbose version "
	    "zero-terminated", CLS_T_DIGITS },
	{ "tput", "STVx",
	    "", 0 },
	{ "tee", "aip",
	    "append ignore-interrupts output-error? help version", 0 },
	{ "tr", "Ccdst",
	    "complement delete help squeeze-repeats truncate-set1 "
	    "version", 0 },
	{ "tree", "ACDFH:I:JL:NP:QRST:Xacdfghilno:pqrstuvx",
	    "charset= dirsfirst du filelimit= filesfirst fromfile "
	    "gitignore help hintro= houtro= ignore-case inodes info "
	    "device matchdirs metafirst noreport nolinks prune si sort= "
	    "timefmt= version", 0 },
	{ "tty", "s",
	    "help quiet silent version", 0 },
	{ "uname", "aimnoprsv",
	    "all hardware-platform help kernel-name kernel-release "
	    "kernel-version machine nodename operating-system processor "
	    "version", 0 },
	{ "unexpand", "at:",
	    "all first-only help tabs= version", CLS_T_DIGITS },
	{ "uniq", "Dcdf:is:uw:z",
	    "all-repeated? check-chars= count group? help ignore-case "
	    "repeated skip-chars= skip-fields= unique version "
	    "zero-terminated", 0 },
	{ "uptime", "Vhps",
	    "help pretty since version", 0 },
	{ "users", "",
	    "help version", 0 },
	{ "vdir", "1ABCDFGHI:LNQRST:UXZabcdfghiklmnop:qrstuvw:x",
	    "all almost-all author block-size= classify? color? context "
	    "dereference dereference-command-line "
	    "dereference-command-line-symlink-to-dir directory dired "
	    "escape file-type format= full-time group-directories-first "
	    "help hide= hide-control-chars human-readable hyperlink? "
	    "ignore= ignore-backups indicator-style= inode kibibytes "
	    "literal no-group numeric-uid-gid quote-name quoting-style= "
	    "recursive reverse show-control-chars si size sort= "
	    "tabsize= time= time-style= version width= zero", 0 },
	{ "vmstat", "DS:Vadfhmnp:stwy",
	    "active disk disk-sum forks help no-first one-header "
	    "partition= slabs stats timestamp unit= version wide", 0 },
	{ "w", "Vfhiosu",
	    "from help ip-addr no-current no-header old-style short "
	    "version", 0 },
	{ "wc", "Lclmw",
	    "bytes chars files0-from= help lines max-line-length "
	    "version words", 0 },
	{ "whatis", "C:L:M:Vdlm:rs:vw",
	    "config-file= debug help locale= long manpath= regex "
	    "section= sections= systems= usage verbose version wildcard", 0 },
	{ "whereis", "B:M:S:Vbfhlmsu",
	    "help version", 0 },
	{ "which", "as",
	    "", 0 },
	{ "who", "HTabdlmpqrstuw",
	    "all boot count dead heading help ips login lookup mesg "
	    "message process runlevel short time users version writable", 0 },
	{ "whoami", "",
	    "help version", 0 },
	{ "xxd", "Eabc:de:g:hil:n:o:prs:uvCR:",
	    "autoskip bits cols= groupsize= help include len= name= "
	    "offset= plain postscript revert seek= uppercase version", CLS_T_DIGITS },
	{ "xzcat", "HT:Vcdefhklqtvz",
	    "compress decompress extreme force help keep list long-help "
	    "quiet stdout test threads= verbose version", 0 },
	{ "yes", "",
	    "help version", 0 },
	{ "zcat", "S:flqrtv",
	    "force help list quiet recursive suffix= synchronous test "
	    "verbose version", 0 },
	{ "zgrep", "A:B:C:D:EFGHILPRTUVZabcd:e:f:hilm:noqrsvwxz",
	    "after-context= basic-regexp before-context= binary "
	    "binary-files= byte-offset color? colour? context= count "
	    "dereference-recursive devices= directories= exclude= "
	    "exclude-dir= exclude-from= extended-regexp file= "
	    "files-with-matches files-without-match fixed-strings "
	    "group-separator= help ignore-case include= initial-tab "
	    "invert-match label= line-buffered line-number line-regexp "
	    "max-count= no-filename no-group-separator no-ignore-case "
	    "no-messages null null-data only-matching perl-regexp quiet "
	    "recursive regexp= silent text version with-filename "
	    "word-regexp", 0 },
};

const size_t cls_ntools = sizeof cls_tools / sizeof cls_tools[0];
