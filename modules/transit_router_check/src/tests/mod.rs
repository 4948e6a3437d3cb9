mod parse;
