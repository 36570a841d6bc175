# SPDX-License-Identifier: MIT
# bash completion for sectorfs, sectorfs-img, sectorfs-stat and sectorfs-bench.
#
# Installed as bash-completion's file "sectorfs" with links named after
# the three tools, so that bash-completion loads it on demand for any of
# them; it can also be sourced as it is.  Image names are completed in
# store directories: STORE/<TAB> offers each NAME that has a sidecar
# STORE/NAME.json (the images, not the sidecars), and in mount points:
# sectorfs-stat MNT <TAB> offers the names in MNT/.stats.  Option lists
# are those of each program's --help (tests/completion.sh keeps them so).

# _sectorfs_add WORDS...: append to COMPREPLY the words that start with $cur.
_sectorfs_add()
{
	local w
	for w in "$@"; do
		[[ $w == "$cur"* ]] && COMPREPLY+=("$w")
	done
}

# _sectorfs_command COMMANDS...: set cmd (the caller's) to the command word of the line, the
# first that is no option; when there is none yet, complete $cur as an option of the tool or
# one of COMMANDS and return 1.
_sectorfs_command()
{
	local i
	cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; return 0 ;;
		esac
	done
	if [[ $cur == -* ]]; then _sectorfs_add -h --help -V --version; else _sectorfs_add "$@"; fi
	return 1
}

# _sectorfs_images: complete $cur as STORE/NAME: the images of the store
# directory it names (NAME for every NAME.json there), and directories.
_sectorfs_images()
{
	local dir base f name
	if [[ $cur == */* ]]; then
		dir=${cur%/*}
		base=${cur##*/}
		[[ -z $dir ]] && dir=/
	else
		dir=.
		base=$cur
	fi
	for f in "$dir"/*.json; do
		[[ -f $f ]] || continue
		name=${f##*/}
		name=${name%.json}
		[[ $name == .* || $name != "$base"* ]] && continue
		if [[ $dir == . && $cur != ./* ]]; then
			COMPREPLY+=("$name")
		elif [[ $dir == / ]]; then
			COMPREPLY+=("/$name")
		else
			COMPREPLY+=("$dir/$name")
		fi
	done
	_sectorfs_dirs
}

# _sectorfs_dirs: directories starting with $cur (readline adds their slash: -o filenames).
_sectorfs_dirs()
{
	local d n=${#COMPREPLY[@]}
	while IFS= read -r d; do
		[[ -n $d ]] && COMPREPLY+=("$d")
	done < <(compgen -d -- "$cur")
	# a directory goes on to what is in it: no space after it
	((${#COMPREPLY[@]} > n)) && compopt -o nospace 2>/dev/null
	compopt -o filenames 2>/dev/null
}

_sectorfs_files()
{
	local f
	while IFS= read -r f; do
		COMPREPLY+=("$f")
	done < <(compgen -f -- "$cur")
	compopt -o filenames 2>/dev/null
}

# ---- sectorfs ----

_sectorfs_o()
{
	# -o takes a comma-separated list: complete its last item
	local head="" item=$cur
	if [[ $cur == *,* ]]; then
		head=${cur%,*},
		item=${cur##*,}
	fi
	local opts=(sector= provisioning= block_size= no_zero_offload profile= nostats buffered pidfile= nonempty
		max_open= max_threads= max_idle_threads= max_background= io_uring= serve= nodefault_permissions allow_other allow_root auto_unmount
		default_permissions ro rw)
	local v=() w
	case $item in
	sector=*) v=(sector=512n sector=512e sector=4kn) ;;
	provisioning=*) v=(provisioning=thin provisioning=zeroedthick provisioning=eagerzeroedthick) ;;
	block_size=*) v=(block_size=64K block_size=256K block_size=1M block_size=4M) ;;
	profile=*) v=(profile=sata-ssd profile=nvme-slow-small-writes profile=hdd-7200 profile=ram) ;;
	io_uring=*) v=(io_uring=auto io_uring=on io_uring=off) ;;
	serve=*) v=(serve=loop serve=threads) ;;
	*) v=("${opts[@]}") ;;
	esac
	for w in "${v[@]}"; do
		[[ $w == "$item"* ]] && COMPREPLY+=("$head$w")
	done
	compopt -o nospace 2>/dev/null
}

_sectorfs()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	if [[ $prev == -o ]]; then
		_sectorfs_o
		return 0
	fi
	if [[ $cur == -* ]]; then
		_sectorfs_add -o -f -d -s -h --help -V --version
		return 0
	fi
	_sectorfs_dirs             # STORE and MOUNTPOINT are directories
}

# ---- sectorfs-img ----

_sectorfs_img()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmd
	COMPREPLY=()
	_sectorfs_command create info check resize inflate map || return 0
	case $cmd in
	create)
		case $prev in
		-f|--format) _sectorfs_add 512n 512e 4kn; return 0 ;;
		-p|--provisioning) _sectorfs_add thin zeroedthick eagerzeroedthick; return 0 ;;
		-s|--size|-b|--block-size|--logical|--physical) return 0 ;;
		--from) _sectorfs_files; return 0 ;;
		esac
		if [[ $cur == -* ]]; then
			_sectorfs_add -s --size -f --format --logical --physical -p --provisioning -b --block-size \
				--no-zero-offload --from --raw -h --help
		else
			_sectorfs_dirs     # a new image: its store
		fi
		;;
	info|map)
		if [[ $cur == -* ]]; then _sectorfs_add --json -h --help; else _sectorfs_images; fi ;;
	check)
		if [[ $cur == -* ]]; then _sectorfs_add --repair -h --help; else _sectorfs_images; fi ;;
	resize)
		if [[ $cur == -* ]]; then _sectorfs_add -h --help
		elif [[ $prev == resize ]]; then _sectorfs_images; fi ;;   # then a SIZE
	inflate)
		if [[ $cur == -* ]]; then _sectorfs_add -h --help; else _sectorfs_images; fi ;;
	esac
	return 0
}

# ---- sectorfs-stat ----

_sectorfs_stat()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} mnt="" i f name
	COMPREPLY=()
	case $prev in
	-i|--interval|-c|--count) return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		_sectorfs_add -i --interval -c --count -r --refused --json -h --help -V --version
		return 0
	fi
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-i|--interval|-c|--count) ((i++)) ;;
		-*) ;;
		*) mnt=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $mnt ]]; then
		_sectorfs_dirs
		return 0
	fi
	# the images of the mount: the NAME.json files of MNT/.stats
	for f in "$mnt"/.stats/*.json; do
		[[ -f $f ]] || continue
		name=${f##*/}
		name=${name%.json}
		[[ $name == "$cur"* ]] && COMPREPLY+=("$name")
	done
	return 0
}

# ---- sectorfs-bench ----

_sectorfs_bench()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd
	COMPREPLY=()
	_sectorfs_command sweep zeroing redo scale crash powercut || return 0
	case $prev in
	--store|--mount) _sectorfs_dirs; return 0 ;;
	--daemon|--profile-out|--compare|--floor|--svg) _sectorfs_files; return 0 ;;
	--profile) _sectorfs_add sata-ssd nvme-slow-small-writes hdd-7200 ram; _sectorfs_files; return 0 ;;
	--sector) _sectorfs_add 512n 512e 4kn; return 0 ;;
	--redo-block) _sectorfs_add 512 4096; return 0 ;;
	--record-dist) _sectorfs_add uniform: fixed:; compopt -o nospace 2>/dev/null; return 0 ;;
	--dir) _sectorfs_dirs; return 0 ;;
	--min|--max|--qd|--time|--span|--xfer|--block-size|--size|--clients|--log-size|--repeat) return 0 ;;
	--images|--nofile|--load-seconds|--after-seconds|--compare-seconds|--touch-idle-seconds) return 0 ;;
	--workload|--check|--points|--seed|--replay|--timeout|--time-limit|--rounds|--max-writes) return 0 ;;
	--on) _sectorfs_add writes flushes seconds end writes,flushes,end; return 0 ;;
	--policy) _sectorfs_add lose-all keep-all random random:0.5; return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		case $cmd in
		sweep) _sectorfs_add --min --max --qd --time --span --read-only --write-only --json --csv --profile-out \
			--compare --floor --svg -h --help ;;
		zeroing) _sectorfs_add --store --mount --xfer --block-size --size --sector --daemon --repeat --profile \
			--svg --json -h --help ;;
		redo) _sectorfs_add --redo-block --repeat --clients --time --record-dist --log-size --svg --json -h --help ;;
		scale) _sectorfs_add --images --size --nofile --dir --load-seconds --after-seconds --repeat \
			--compare-seconds --touch-idle-seconds --daemon --keep --json -h --help ;;
		crash) _sectorfs_add --workload --check --loop --points --on --seed --policy --replay --timeout --keep-failing \
			--time-limit --json -h --help ;;
		powercut) _sectorfs_add --rounds --repeat --seed --policy --max-writes --store --mount --daemon --svg \
			--json -h --help ;;
		esac
		return 0
	fi
	[[ $cmd == sweep || $cmd == redo || $cmd == crash ]] && _sectorfs_files   # MNT/NAME, the disk
	return 0
}

complete -F _sectorfs sectorfs
complete -F _sectorfs_img sectorfs-img
complete -F _sectorfs_stat sectorfs-stat
complete -F _sectorfs_bench sectorfs-bench
